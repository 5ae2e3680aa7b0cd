/**
 * Map files: their entries as HAProxy reads them, how the configuration
 * refers to each one, and the runtime operation that moves a running map
 * from the deployed content to the desired one.
 */
import { compareCodeUnits } from '../compare.ts';
import type { ParsedConfig } from './config-parser.ts';
import type { MapEntry, RuntimeOperation } from './plan-types.ts';

/**
 * Match methods whose lookup takes the first entry that matches, in file
 * order. `map`/`map_str` (exact) and `map_ip` index their entries in trees,
 * and so does `map_beg` in 2.6 (longest prefix: checked on 2.6.12 with a
 * shorter prefix listed first): for those, order does not matter.
 */
const UNORDERED_MATCHES: ReadonlySet<string> = new Set(['str', 'beg', 'ip']);

/** `map(`, `map_<match>(`, `map_<match>_<output>(` converters and the set-map/del-map actions, with their file argument. */
/** Text a map use is written with: the word, or an escape that might make it. */
const MAP_TEXT = /map|\\/;

const MAP_USE = /(?:^|[^a-z0-9_-])(map(?:_([a-z0-9]+))?(?:_[a-z0-9]+)?|set-map|del-map)\(([^,)]*)/g;

interface MapUse {
  readonly path: string;
  /** The match method of a converter; undefined for an action, which looks nothing up. */
  readonly match: string | undefined;
}

/**
 * Map entries as HAProxy 2.6 reads a map file: `#` in the first column
 * starts a comment (an indented `#` is a key, as in HAProxy), blank lines
 * are skipped, the key is the first word after leading spaces and tabs, the
 * value the rest of the line with the surrounding spaces and tabs trimmed.
 * A `\r` ends the line.
 */
export function mapEntries(content: string): MapEntry[] {
  const entries: MapEntry[] = [];
  for (const raw of content.split('\n')) {
    const line = raw.split('\r', 1)[0] ?? '';
    if (line.startsWith('#')) continue;
    const match = /^[ \t]*([^ \t]+)[ \t]*(.*?)[ \t]*$/.exec(line);
    if (match) entries.push([match[1] ?? '', match[2] ?? '']);
  }
  return entries;
}

function mapUses(config: ParsedConfig): MapUse[] {
  const uses: MapUse[] = [];
  for (const section of config.sections) {
    // Only a section whose text says "map" (or escapes a letter of it) can use one: the others are not read.
    if (!MAP_TEXT.test(section.source)) continue;
    for (const line of section.lines) {
      for (const word of line.words) {
        for (const match of word.matchAll(MAP_USE)) {
          const [, name = '', method, path = ''] = match;
          const action = name === 'set-map' || name === 'del-map';
          uses.push({ path: path.trim(), match: action ? undefined : name === 'map' ? 'str' : method });
        }
      }
    }
  }
  return uses;
}

/** `path` names the map file `map` (a name relative to the maps directory). */
export function namesMap(path: string, map: string): boolean {
  return path === map || path.endsWith(`/${map}`);
}

/** The same entries in the same order. */
export function sameEntries(a: readonly MapEntry[], b: readonly MapEntry[]): boolean {
  return a.length === b.length && a.every(([key, value], index) => b[index]?.[0] === key && b[index]?.[1] === value);
}

/** Runtime updates of the maps whose entries changed; added and removed map files are the caller's (a reload). */
export function planMaps(deployed: Readonly<Record<string, string>>, desired: Readonly<Record<string, string>>, config: ParsedConfig): RuntimeOperation[] {
  const operations: RuntimeOperation[] = [];
  let uses: MapUse[] | undefined;
  for (const map of Object.keys(desired).sort(compareCodeUnits)) {
    const oldContent = deployed[map];
    const newContent = desired[map];
    if (oldContent === undefined || newContent === undefined || oldContent === newContent) continue;
    const before = mapEntries(oldContent);
    const entries = mapEntries(newContent);
    // Entries in the same order mean the same lookups, whatever comments or spacing changed.
    if (sameEntries(before, entries)) continue;
    uses ??= mapUses(config);
    const own = uses.filter((use) => namesMap(use.path, map));
    // A key keeps the value it last got in a Map: the entry diff compares the values lookups find last.
    const old = new Map(before);
    const next = new Map(entries);
    operations.push({
      type: 'updateMap',
      map,
      entries,
      before,
      added: [...next].filter(([key]) => !old.has(key)),
      changed: [...next].filter(([key, value]) => old.has(key) && old.get(key) !== value),
      removed: [...old.keys()].filter((key) => !next.has(key)),
      references: [...new Set(own.map((use) => use.path))].sort(compareCodeUnits),
      ordered: own.some((use) => use.match !== undefined && !UNORDERED_MATCHES.has(use.match)),
    });
  }
  return operations;
}
