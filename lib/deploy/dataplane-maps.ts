/**
 * Map updates through the Data Plane API's runtime map endpoints
 * (docs/dataplane-api-contract.md §6, §6a), and the reasons a map update
 * cannot go that way and needs its file replaced and a reload:
 *
 * - the API reaches a runtime map only as `<maps_dir>/<storage name>`
 *   (client-native GetMapsPath), so every reference in the configuration
 *   must be that path;
 * - a key is changed or deleted by putting it in the URL path, which the
 *   pattern `^[^\r\n<>*;$#&{}"]+$` refuses for keys such as `*.example.com`
 *   (DPAPI 3.0.19+, 3.2.11+, 3.3.3+, 3.4); only an addition carries the key
 *   in the body;
 * - `add map` takes one word of value, entry calls cannot express duplicate
 *   keys, and 3.4 refuses `;` anywhere in a runtime command;
 * - an entry is always added at the end: where a lookup takes the first
 *   match in file order, the new content must have the added entries last.
 */
import type { DataplaneClient } from '../dataplane/client.ts';
import { ignoring } from '../dataplane/errors.ts';
import { sameEntries } from '../haproxy/plan-maps.ts';
import type { MapEntry, RuntimeOperation } from '../haproxy/plan-types.ts';

type MapUpdate = Extract<RuntimeOperation, { type: 'updateMap' }>;

/** Characters the runtime map endpoints refuse in a path parameter. */
const PATH_REFUSED = /[\r\n<>*;$#&{}"]/;

function duplicateKey(entries: readonly MapEntry[]): string | undefined {
  const seen = new Set<string>();
  for (const [key] of entries) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

/** The map as the runtime has it after the entry calls: kept entries in place with their new values, additions at the end. */
function afterEntryCalls(update: MapUpdate): MapEntry[] {
  const removed = new Set(update.removed);
  const changed = new Map(update.changed);
  return [...update.before.filter(([key]) => !removed.has(key)).map(([key, value]): MapEntry => [key, changed.get(key) ?? value]), ...update.added];
}

/** Why this map update needs the file replaced and a reload; undefined when entry calls do it. */
export function mapRefusal(update: MapUpdate, mapsDir: string | undefined): string | undefined {
  const label = `map ${update.map}`;
  const runtimePath = mapsDir === undefined ? undefined : `${mapsDir}/${update.map}`;
  const other = update.references.find((reference) => reference !== runtimePath);
  if (other !== undefined) {
    return `${label} is named ${other} in the configuration; the Data Plane API reaches a runtime map only as ${runtimePath ?? '<maps_dir>/<name>'}`;
  }
  const duplicate = duplicateKey(update.before) ?? duplicateKey(update.entries);
  if (duplicate !== undefined) return `${label} has the key ${duplicate} more than once, which entry updates cannot express`;
  const byPath = [...update.removed, ...update.changed.map(([key]) => key)].find((key) => PATH_REFUSED.test(key));
  if (byPath !== undefined) {
    return `${label}: the key ${byPath} cannot be changed or deleted through the Data Plane API (its runtime map paths refuse * # $ & ; < > { } ")`;
  }
  const unsendable = [...update.added, ...update.changed].find(([key, value]) => /\s/.test(value) || key.includes(';') || value.includes(';'));
  if (unsendable !== undefined) return `${label}: the entry "${unsendable[0]} ${unsendable[1]}" cannot be sent as one runtime map entry`;
  if (update.ordered && !sameEntries(afterEntryCalls(update), update.entries)) {
    return `${label}: its lookups take the first match in file order and new entries do not all go last, where the runtime API adds them`;
  }
  return undefined;
}

/**
 * A key or value as the Data Plane API must be given it to reach the runtime
 * intact: client-native puts it into the runtime command as it is
 * (runtime/maps.go: `add map %s %s %s`, `set map`, `del map` alike), and
 * HAProxy's CLI reads `\` as an escape, so a path expression's `\.` would
 * arrive as `.`, any character (seen on HAProxy 2.6: `add map m ^a\.b x`
 * stores `^a.b`).
 */
function commandWord(text: string): string {
  return text.replaceAll('\\', '\\\\');
}

/**
 * The entry calls for an update mapRefusal let through, by storage name.
 * They may be replayed (a conflict makes the plan run again): a key already
 * gone or already added counts as done.
 */
export async function updateMapEntries(client: DataplaneClient, update: MapUpdate): Promise<number> {
  // A map no lookup uses has nothing to update at runtime: its file is enough.
  if (update.references.length === 0) return 0;
  for (const key of update.removed) await ignoring('not-found', () => client.deleteMapEntry(update.map, commandWord(key)));
  for (const [key, value] of update.changed) await client.setMapEntry(update.map, commandWord(key), commandWord(value));
  for (const [key, value] of update.added) {
    const added = await ignoring('conflict', () => client.addMapEntry(update.map, commandWord(key), commandWord(value)));
    if (added === undefined) await client.setMapEntry(update.map, commandWord(key), commandWord(value));
  }
  return update.removed.length + update.changed.length + update.added.length;
}
