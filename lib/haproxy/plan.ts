/**
 * Decides how to move a running HAProxy 2.6 from the deployed files to the
 * desired ones: nothing, Runtime API operations, or a reload with the first
 * reason the runtime cannot apply. Whatever the runtime cannot reproduce
 * exactly as a restart from the desired configuration would is a reload: a
 * runtime change that diverges from the configuration file would silently
 * change behaviour at the next reload.
 */
import { isIP } from 'node:net';
import type { RenderedFiles } from '../pipeline/model.ts';
import { parseConfig } from './config-parser.ts';
import type { ConfigLine, ParsedConfig, ParsedServer, Section } from './config-parser.ts';
import type { Plan, RuntimeOperation, ServerSpec } from './plan-types.ts';

type MapEntry = readonly [key: string, value: string];

/** A reload reason, or the operations found so far. */
type Outcome = { readonly reload: string } | { readonly operations: readonly RuntimeOperation[] };

/** A backend or listen section with the defaults sections it inherits from, nearest first. */
interface ServerSection {
  readonly section: Section;
  readonly defaults: readonly Section[];
}

const EMPTY: Plan = { kind: 'empty' };

/**
 * The `add server` keywords of HAProxy 2.6 (management.txt, checked against
 * 2.6.12) this planner accepts, with how many values follow each. Left out
 * on purpose: `track` (it cannot follow a dynamic server, which the tracked
 * one may be), `id` (may collide with the ids HAProxy assigned),
 * `source`/`usesrc` (variable arity), `agent-*` (an agent may enable the
 * server on its own, which a reload would not reproduce). `init-addr`,
 * `no-check-ssl`, `cookie`, `resolvers` are refused by 2.6 itself.
 */
const ADD_SERVER_OPTIONS: ReadonlyMap<string, 0 | 1> = new Map<string, 0 | 1>([
  ...[
    'allow-0rtt',
    'backup',
    'check',
    'check-send-proxy',
    'check-ssl',
    'check-via-socks4',
    'disabled',
    'enabled',
    'force-sslv3',
    'force-tlsv10',
    'force-tlsv11',
    'force-tlsv12',
    'force-tlsv13',
    'no-ssl-reuse',
    'no-sslv3',
    'no-tls-tickets',
    'no-tlsv10',
    'no-tlsv11',
    'no-tlsv12',
    'no-tlsv13',
    'send-proxy',
    'send-proxy-v2',
    'send-proxy-v2-ssl',
    'send-proxy-v2-ssl-cn',
    'ssl',
    'tfo',
    'tls-tickets',
  ].map((option): [string, 0] => [option, 0]),
  ...[
    'addr',
    'alpn',
    'ca-file',
    'check-alpn',
    'check-proto',
    'check-sni',
    'ciphers',
    'ciphersuites',
    'crl-file',
    'crt',
    'downinter',
    'error-limit',
    'fall',
    'fastinter',
    'inter',
    'maxconn',
    'maxqueue',
    'minconn',
    'npn',
    'observe',
    'on-error',
    'on-marked-down',
    'on-marked-up',
    'pool-low-conn',
    'pool-max-conn',
    'pool-purge-delay',
    'port',
    'proto',
    'proxy-v2-options',
    'rise',
    'slowstart',
    'sni',
    'ssl-max-ver',
    'ssl-min-ver',
    'verify',
    'verifyhost',
    'weight',
    'ws',
  ].map((option): [string, 1] => [option, 1]),
]);

/**
 * Options naming a file. After start HAProxy 2.6 no longer reads files: a
 * dynamic server can only use one already loaded (checked on 2.6.12:
 * "unable to load" / "unable to stat").
 */
const FILE_OPTIONS: ReadonlySet<string> = new Set(['ca-file', 'crl-file', 'crt']);

/** Algorithms that hash a request property: static unless `hash-type consistent`. */
const HASH_ALGORITHMS: ReadonlySet<string> = new Set(['hash', 'hdr', 'rdp-cookie', 'source', 'uri', 'url_param']);

/** Algorithms that accept `add server` and weight changes (random always uses consistent hashing). */
const DYNAMIC_ALGORITHMS: ReadonlySet<string> = new Set(['first', 'leastconn', 'random', 'roundrobin']);

export function planDeployment(deployed: RenderedFiles, desired: RenderedFiles): Plan {
  if (
    deployed.config === desired.config &&
    sameRecord(deployed.maps, desired.maps) &&
    sameRecord(deployed.certificates, desired.certificates) &&
    sameRecord(deployed.files, desired.files)
  ) {
    return EMPTY;
  }
  const config = planConfig(parseConfig(deployed.config), parseConfig(desired.config));
  if ('reload' in config) return { kind: 'reload', reason: config.reload };
  const reason =
    addedOrRemovedReason('map file', deployed.maps, desired.maps) ??
    addedOrRemovedReason('certificate', deployed.certificates, desired.certificates) ??
    addedOrRemovedReason('general file', deployed.files, desired.files) ??
    changedGeneralFileReason(deployed.files, desired.files);
  if (reason !== undefined) return { kind: 'reload', reason };
  const operations = [
    ...config.operations,
    ...planMaps(deployed.maps, desired.maps),
    ...planCertificates(deployed.certificates, desired.certificates),
  ];
  return operations.length === 0 ? EMPTY : { kind: 'runtime', operations };
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function addedOrRemovedReason(
  what: string,
  deployed: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): string | undefined {
  const added = Object.keys(desired).filter((name) => !Object.hasOwn(deployed, name)).sort(compare)[0];
  if (added !== undefined) return `${what} ${added} added`;
  const removed = Object.keys(deployed).filter((name) => !Object.hasOwn(desired, name)).sort(compare)[0];
  return removed === undefined ? undefined : `${what} ${removed} removed`;
}

function changedGeneralFileReason(
  deployed: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): string | undefined {
  const changed = Object.keys(desired).filter((name) => deployed[name] !== desired[name]).sort(compare)[0];
  return changed === undefined ? undefined : `general file ${changed} changed (general files are read only at start)`;
}

function planConfig(deployed: ParsedConfig, desired: ParsedConfig): Outcome {
  const sequence = sectionSequenceReason(deployed.sections, desired.sections);
  if (sequence !== undefined) return { reload: sequence };
  // Same section sequence: sections pair up by position.
  const pairs = desired.sections.map((after, index) => ({ index, before: deployed.sections[index] ?? after, after }));
  for (const { before, after } of pairs) {
    const reason = sectionReason(before, after);
    if (reason !== undefined) return { reload: reason };
  }
  const loaded = loadedFiles(deployed);
  const backends: { readonly backend: string; readonly operations: readonly RuntimeOperation[] }[] = [];
  for (const { index, before, after } of pairs) {
    if (after.keyword !== 'backend' && after.keyword !== 'listen') continue;
    const outcome = planServers(
      { section: before, defaults: defaultsChain(deployed.sections, index) },
      { section: after, defaults: defaultsChain(desired.sections, index) },
      loaded,
    );
    if ('reload' in outcome) return outcome;
    backends.push({ backend: after.name ?? '', operations: outcome.operations });
  }
  // planServers orders by server name; this orders by backend, whatever the order of the sections.
  backends.sort((a, b) => compare(a.backend, b.backend));
  return { operations: backends.flatMap((backend) => backend.operations) };
}

function sectionLabel(section: Section): string {
  if (section.keyword === '') return 'lines before the first section';
  return section.name === undefined ? section.keyword : `${section.keyword} ${section.name}`;
}

function sectionKey(section: Section): string {
  return JSON.stringify([section.keyword, section.name ?? null]);
}

function countKeys(sections: readonly Section[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const section of sections) counts.set(sectionKey(section), (counts.get(sectionKey(section)) ?? 0) + 1);
  return counts;
}

/** Names the first section added, removed or moved; undefined when both have the same sections in the same order. */
function sectionSequenceReason(deployed: readonly Section[], desired: readonly Section[]): string | undefined {
  let index = 0;
  while (
    index < deployed.length &&
    index < desired.length &&
    sectionKey(deployed[index]!) === sectionKey(desired[index]!)
  ) {
    index++;
  }
  const before = deployed[index];
  const after = desired[index];
  if (before === undefined && after === undefined) return undefined;
  const deployedCounts = countKeys(deployed);
  const desiredCounts = countKeys(desired);
  const count = (counts: Map<string, number>, section: Section): number => counts.get(sectionKey(section)) ?? 0;
  if (after !== undefined && count(desiredCounts, after) > count(deployedCounts, after)) {
    return `${sectionLabel(after)} added`;
  }
  if (before !== undefined && count(deployedCounts, before) > count(desiredCounts, before)) {
    return `${sectionLabel(before)} removed`;
  }
  return `${sectionLabel((after ?? before)!)} moved`;
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, index) => word === b[index]);
}

/** Words as they could be written back, for reasons a user reads. */
function showWords(words: readonly string[]): string {
  return words
    .map((word) => {
      if (/^[^\s#"'\\]+$/.test(word)) return word;
      return word.includes("'") ? JSON.stringify(word) : `'${word}'`;
    })
    .join(' ');
}

function sectionReason(before: Section, after: Section): string | undefined {
  const label = sectionLabel(after);
  if (!sameWords(before.words, after.words)) {
    return `${label}: header changed from "${showWords(before.words)}" to "${showWords(after.words)}"`;
  }
  return linesReason(label, before.lines, after.lines);
}

/**
 * Names the first differing line. The common head and tail are set aside;
 * of what remains, a line only on one side was added or removed, a line on
 * both sides but at another place moved, and two lines each only on their
 * side at the same place changed.
 */
function linesReason(label: string, before: readonly ConfigLine[], after: readonly ConfigLine[]): string | undefined {
  const same = (a: ConfigLine, b: ConfigLine): boolean => sameWords(a.words, b.words);
  let start = 0;
  while (start < before.length && start < after.length && same(before[start]!, after[start]!)) start++;
  let beforeEnd = before.length;
  let afterEnd = after.length;
  while (beforeEnd > start && afterEnd > start && same(before[beforeEnd - 1]!, after[afterEnd - 1]!)) {
    beforeEnd--;
    afterEnd--;
  }
  const removed = before.slice(start, beforeEnd);
  const added = after.slice(start, afterEnd);
  const gone = removed[0];
  const first = added[0];
  if (first === undefined) return gone === undefined ? undefined : `${label}: "${showWords(gone.words)}" removed`;
  if (gone === undefined) return `${label}: "${showWords(first.words)}" added`;
  const firstWasThere = removed.some((line) => same(line, first));
  const goneStays = added.some((line) => same(line, gone));
  if (!firstWasThere && !goneStays) {
    return `${label}: line ${first.line} changed from "${showWords(gone.words)}" to "${showWords(first.words)}"`;
  }
  if (!firstWasThere) return `${label}: "${showWords(first.words)}" added`;
  if (!goneStays) return `${label}: "${showWords(gone.words)}" removed`;
  return `${label}: line ${first.line} "${showWords(first.words)}" moved`;
}

/** `from <name>` in a section header: `backend b from d`, `defaults d from e`, `defaults from e`. */
function fromName(section: Section): string | undefined {
  const { words } = section;
  if (section.keyword === 'defaults' && section.name === undefined && words[1] === 'from') return words[2];
  return words[2] === 'from' ? words[3] : undefined;
}

/**
 * The defaults sections a section inherits from, nearest first: the one its
 * `from` names, else the last defaults section before it (a new defaults
 * section resets the previous one's settings), then whatever that one
 * names with its own `from`.
 */
function defaultsChain(sections: readonly Section[], index: number): Section[] {
  const chain: Section[] = [];
  const lastDefaults = (before: number, name: string | undefined): number =>
    sections.findLastIndex(
      (section, at) => at < before && section.keyword === 'defaults' && (name === undefined || section.name === name),
    );
  const own = sections[index];
  let at = own === undefined ? -1 : lastDefaults(index, fromName(own));
  while (at >= 0) {
    const section = sections[at]!;
    if (chain.includes(section)) break;
    chain.push(section);
    const parent = fromName(section);
    at = parent === undefined ? -1 : lastDefaults(at, parent);
  }
  return chain;
}

/** The last line starting with `keyword` in the section, else in its defaults, nearest first. */
function directive(context: ServerSection, keyword: string): ConfigLine | undefined {
  for (const section of [context.section, ...context.defaults]) {
    const line = section.lines.findLast((candidate) => candidate.words[0] === keyword);
    if (line !== undefined) return line;
  }
  return undefined;
}

/** Why the backend refuses `add server` and weight changes, or undefined when its algorithm is dynamic. */
function staticAlgorithmReason(context: ServerSection): string | undefined {
  const balance = directive(context, 'balance')?.words.slice(1) ?? [];
  const algorithm = (balance[0] ?? 'roundrobin').replace(/\(.*$/, '');
  if (DYNAMIC_ALGORITHMS.has(algorithm)) return undefined;
  const shown = `balance ${showWords(balance)}`;
  if (!HASH_ALGORITHMS.has(algorithm)) return `${shown} is a static load-balancing algorithm`;
  const hashType = directive(context, 'hash-type')?.words[1] ?? 'map-based';
  return hashType === 'consistent'
    ? undefined
    : `${shown} with hash-type ${hashType} is a static load-balancing algorithm (hash-type consistent is dynamic)`;
}

/**
 * The words of the default-server lines that apply to a server on `line`:
 * those of its defaults and the earlier ones of its own section.
 */
function inheritedWords(context: ServerSection, line: number): string[] {
  const fromDefaults = [...context.defaults]
    .reverse()
    .flatMap((section) => section.lines.filter((candidate) => candidate.words[0] === 'default-server'));
  const fromSection = context.section.lines.filter(
    (candidate) => candidate.words[0] === 'default-server' && candidate.line < line,
  );
  return [...fromDefaults, ...fromSection].flatMap((candidate) => candidate.words.slice(1));
}

function lastWeight(words: readonly string[]): number | undefined {
  let weight: number | undefined;
  words.forEach((word, index) => {
    const value = words[index + 1];
    if (word === 'weight' && value !== undefined && /^\d+$/.test(value)) weight = Number(value);
  });
  return weight;
}

function lastState(words: readonly string[]): boolean | undefined {
  const last = words.findLast((word) => word === 'disabled' || word === 'enabled');
  return last === undefined ? undefined : last === 'disabled';
}

/** Options without the ones the runtime sets (weight and state). */
function otherOptions(options: readonly string[]): string[] {
  const others: string[] = [];
  for (let index = 0; index < options.length; index++) {
    const option = options[index]!;
    if (option === 'weight' && /^\d+$/.test(options[index + 1] ?? '')) index++;
    else if (option !== 'disabled' && option !== 'enabled') others.push(option);
  }
  return others;
}

/** `<file option> <value>` pairs anywhere in the deployed configuration: files HAProxy has loaded. */
function loadedFiles(config: ParsedConfig): Set<string> {
  const loaded = new Set<string>();
  const collect = (words: readonly string[]): void => {
    words.forEach((word, index) => {
      const value = words[index + 1];
      if (FILE_OPTIONS.has(word) && value !== undefined) loaded.add(`${word} ${value}`);
    });
  };
  for (const section of config.sections) {
    for (const line of section.lines) collect(line.words);
    for (const server of section.servers) collect(server.options);
  }
  return loaded;
}

function showAddress(server: ServerSpec): string {
  return server.port === 0 ? server.address : `${server.address}:${server.port}`;
}

function serversByName(context: ServerSection): Map<string, ParsedServer> | string {
  const byName = new Map<string, ParsedServer>();
  for (const server of context.section.servers) {
    if (byName.has(server.name)) return `${sectionLabel(context.section)}: server name ${server.name} used twice`;
    byName.set(server.name, server);
  }
  return byName;
}

function planServers(deployed: ServerSection, desired: ServerSection, loaded: ReadonlySet<string>): Outcome {
  const before = serversByName(deployed);
  if (typeof before === 'string') return { reload: before };
  const after = serversByName(desired);
  if (typeof after === 'string') return { reload: after };
  const backend = desired.section.name ?? '';
  const operations: RuntimeOperation[] = [];
  for (const name of [...new Set([...before.keys(), ...after.keys()])].sort(compare)) {
    const old = before.get(name);
    const next = after.get(name);
    if (next === undefined) {
      operations.push({ type: 'deleteServer', backend, server: name });
    } else if (old === undefined) {
      const reason = addServerReason(desired, next, loaded);
      if (reason !== undefined) return { reload: reason };
      operations.push({ type: 'addServer', backend, server: serverSpec(next) });
    } else {
      const update = planServerUpdate(deployed, old, desired, next);
      if (typeof update === 'string') return { reload: update };
      if (update !== undefined) operations.push(update);
    }
  }
  return { operations };
}

/** The contract's ServerSpec, without the parser's line number. */
function serverSpec(server: ParsedServer): ServerSpec {
  const { name, address, port, options, weight, disabled } = server;
  return { name, address, port, options, weight, disabled };
}

function addServerReason(
  context: ServerSection,
  server: ParsedServer,
  loaded: ReadonlySet<string>,
): string | undefined {
  const added = `${sectionLabel(context.section)}: server ${server.name} added`;
  const algorithm = staticAlgorithmReason(context);
  if (algorithm !== undefined) return `${added} but ${algorithm}`;
  if (directive(context, 'cookie') !== undefined) {
    return `${added} but the backend sets a cookie (add server cannot give the server one)`;
  }
  if (inheritedWords(context, server.line).length > 0) {
    return `${added} but default-server settings apply (add server ignores them)`;
  }
  if (isIP(server.address) === 0) {
    return `${added} with address ${server.address}, which add server cannot use (it needs an IP address)`;
  }
  const { options } = server;
  for (let index = 0; index < options.length; index++) {
    const option = options[index]!;
    const arity = ADD_SERVER_OPTIONS.get(option);
    if (arity === undefined) return `${added} with option "${option}", which add server does not support`;
    if (arity === 0) continue;
    const value = options[++index];
    if (value === undefined) return `${added} with option "${option}" without a value`;
    const builtIn = option === 'ca-file' && value.startsWith('@');
    if (FILE_OPTIONS.has(option) && !builtIn && !loaded.has(`${option} ${value}`)) {
      return `${added} with "${option} ${value}", a file HAProxy has not loaded (files are read only at start)`;
    }
  }
  return undefined;
}

/** An updateServer with only what changed, undefined when nothing did, or a reload reason. */
function planServerUpdate(
  deployedContext: ServerSection,
  old: ParsedServer,
  desiredContext: ServerSection,
  next: ParsedServer,
): RuntimeOperation | string | undefined {
  const label = `${sectionLabel(desiredContext.section)}: server ${next.name}`;
  const oldOptions = otherOptions(old.options);
  const nextOptions = otherOptions(next.options);
  if (!sameWords(oldOptions, nextOptions)) {
    return `${label} options changed from "${showWords(oldOptions)}" to "${showWords(nextOptions)}"`;
  }
  const oldInherited = inheritedWords(deployedContext, old.line);
  const nextInherited = inheritedWords(desiredContext, next.line);
  if (!sameWords(oldInherited, nextInherited)) return `${label} moved across default-server lines`;
  // Without its own weight or state a server takes the default-server's, else weight 1 and enabled.
  const oldWeight = old.weight ?? lastWeight(oldInherited) ?? 1;
  const nextWeight = next.weight ?? lastWeight(nextInherited) ?? 1;
  const oldDisabled = lastState(old.options) ?? lastState(oldInherited) ?? false;
  const nextDisabled = lastState(next.options) ?? lastState(nextInherited) ?? false;
  const addressChanged = old.address !== next.address;
  const portChanged = old.port !== next.port;
  if (addressChanged || portChanged) {
    const change = `${label} address changed from ${showAddress(old)} to ${showAddress(next)}`;
    if (isIP(old.address) === 0 || isIP(next.address) === 0) {
      return `${change}, which set server addr cannot apply (it takes IP addresses only)`;
    }
    // Port 0 means "the client's destination port", which set server addr cannot switch to or from.
    if (portChanged && (old.port === 0 || next.port === 0)) {
      return `${change}, which set server addr cannot apply (no port means the client's port)`;
    }
  }
  if (oldWeight !== nextWeight) {
    const algorithm = staticAlgorithmReason(desiredContext);
    if (algorithm !== undefined) return `${label} weight changed from ${oldWeight} to ${nextWeight} but ${algorithm}`;
  }
  if (!addressChanged && !portChanged && oldWeight === nextWeight && oldDisabled === nextDisabled) return undefined;
  return {
    type: 'updateServer',
    backend: desiredContext.section.name ?? '',
    server: next.name,
    ...(addressChanged ? { address: next.address } : {}),
    ...(portChanged ? { port: next.port } : {}),
    ...(oldWeight !== nextWeight ? { weight: nextWeight } : {}),
    ...(oldDisabled !== nextDisabled ? { disabled: nextDisabled } : {}),
  };
}

/**
 * Map entries as HAProxy 2.6 reads a map file: `#` in the first column
 * starts a comment (an indented `#` is a key, as in HAProxy), blank lines
 * are skipped, the key is the first word after leading spaces and tabs, the
 * value the rest of the line with the surrounding spaces and tabs trimmed.
 * A `\r` ends the line.
 */
function mapEntries(content: string): MapEntry[] {
  const entries: MapEntry[] = [];
  for (const raw of content.split('\n')) {
    const line = raw.split('\r', 1)[0] ?? '';
    if (line.startsWith('#')) continue;
    const match = /^[ \t]*([^ \t]+)[ \t]*(.*?)[ \t]*$/.exec(line);
    if (match) entries.push([match[1] ?? '', match[2] ?? '']);
  }
  return entries;
}

function sameEntries(a: readonly MapEntry[], b: readonly MapEntry[]): boolean {
  return a.length === b.length && a.every(([key, value], index) => b[index]?.[0] === key && b[index]?.[1] === value);
}

function planMaps(
  deployed: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): RuntimeOperation[] {
  const operations: RuntimeOperation[] = [];
  for (const map of Object.keys(desired).sort(compare)) {
    const oldContent = deployed[map];
    const newContent = desired[map];
    if (oldContent === undefined || newContent === undefined || oldContent === newContent) continue;
    const oldEntries = mapEntries(oldContent);
    const entries = mapEntries(newContent);
    // Entries in the same order mean the same lookups, whatever comments or spacing changed.
    if (sameEntries(oldEntries, entries)) continue;
    // A Map keeps a key where it first appears with the value it last got: the last duplicate wins.
    const before = new Map(oldEntries);
    const after = new Map(entries);
    operations.push({
      type: 'updateMap',
      map,
      entries,
      added: [...after].filter(([key]) => !before.has(key)),
      changed: [...after].filter(([key, value]) => before.has(key) && before.get(key) !== value),
      removed: [...before.keys()].filter((key) => !after.has(key)),
    });
  }
  return operations;
}

function planCertificates(
  deployed: Readonly<Record<string, string>>,
  desired: Readonly<Record<string, string>>,
): RuntimeOperation[] {
  return Object.keys(desired)
    .sort(compare)
    .flatMap((certificate): RuntimeOperation[] => {
      const pem = desired[certificate];
      const old = deployed[certificate];
      if (pem === undefined || old === undefined || old === pem) return [];
      return [{ type: 'updateCertificate', certificate, pem }];
    });
}
