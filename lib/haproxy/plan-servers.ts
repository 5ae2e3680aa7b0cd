/**
 * Servers of a backend or listen section: what the Runtime API can add,
 * delete and change (`add server`, `del server`, `set server addr|weight|
 * state`) exactly as a restart from the desired configuration would have
 * them, and the reason when it cannot.
 */
import { isIP } from 'node:net';
import { compareCodeUnits } from '../compare.ts';
import type { ConfigLine, ParsedConfig, ParsedServer, Section } from './config-parser.ts';
import type { RuntimeOperation, ServerSpec } from './plan-types.ts';
import { sameWords, sectionLabel, showWords } from './plan-sections.ts';

/** A reload reason, or the operations found so far. */
export type Outcome = { readonly reload: string } | { readonly operations: readonly RuntimeOperation[] };

/** A backend or listen section with the defaults sections it inherits from, nearest first. */
export interface ServerSection {
  readonly section: Section;
  readonly defaults: readonly Section[];
}

/**
 * The `add server` keywords of HAProxy 2.6 (management.txt, checked against
 * 2.6.12) this planner accepts, with how many values follow each. Left out
 * on purpose: `track` (it cannot follow a dynamic server, which the tracked
 * one may be), `id` (may collide with the ids HAProxy assigned),
 * `source`/`usesrc` (variable arity), `agent-*` (an agent may enable the
 * server on its own, which a reload would not reproduce). `init-addr`,
 * `no-check-ssl`, `cookie`, `resolvers` are refused by 2.6 itself.
 */
export const ADD_SERVER_OPTIONS: ReadonlyMap<string, 0 | 1> = new Map<string, 0 | 1>([
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

/** Text a word of FILE_OPTIONS is written with: the option itself, or an escape that might make one. */
const FILE_OPTION_TEXT = /ca-file|crl-file|crt|\\/;

/** Algorithms that hash a request property: static unless `hash-type consistent`. */
const HASH_ALGORITHMS: ReadonlySet<string> = new Set(['hash', 'hdr', 'rdp-cookie', 'source', 'uri', 'url_param']);

/** Algorithms that accept `add server` and weight changes (random always uses consistent hashing). */
const DYNAMIC_ALGORITHMS: ReadonlySet<string> = new Set(['first', 'leastconn', 'random', 'roundrobin']);

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
  return hashType === 'consistent' ? undefined : `${shown} with hash-type ${hashType} is a static load-balancing algorithm (hash-type consistent is dynamic)`;
}

/**
 * The words of the default-server lines that apply to a server on `line`:
 * those of its defaults and the earlier ones of its own section.
 */
function inheritedWords(context: ServerSection, line: number): string[] {
  const fromDefaults = [...context.defaults].reverse().flatMap((section) => section.lines.filter((candidate) => candidate.words[0] === 'default-server'));
  const fromSection = context.section.lines.filter((candidate) => candidate.words[0] === 'default-server' && candidate.line < line);
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
export function loadedFiles(config: ParsedConfig): Set<string> {
  const loaded = new Set<string>();
  const collect = (words: readonly string[]): void => {
    words.forEach((word, index) => {
      const value = words[index + 1];
      if (FILE_OPTIONS.has(word) && value !== undefined) loaded.add(`${word} ${value}`);
    });
  };
  for (const section of config.sections) {
    // Only a section whose text names an option (or escapes one) can load a file: the others are not read.
    if (!FILE_OPTION_TEXT.test(section.source)) continue;
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

/** `loaded`: the files the deployed configuration loads (loadedFiles), asked for only when a server is added. */
export function planServers(deployed: ServerSection, desired: ServerSection, loaded: () => ReadonlySet<string>): Outcome {
  const before = serversByName(deployed);
  if (typeof before === 'string') return { reload: before };
  const after = serversByName(desired);
  if (typeof after === 'string') return { reload: after };
  const backend = desired.section.name ?? '';
  const operations: RuntimeOperation[] = [];
  for (const name of [...new Set([...before.keys(), ...after.keys()])].sort(compareCodeUnits)) {
    const old = before.get(name);
    const next = after.get(name);
    if (next === undefined) {
      operations.push({ type: 'deleteServer', backend, server: name });
    } else if (old === undefined) {
      const reason = addServerReason(desired, next, loaded());
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

function addServerReason(context: ServerSection, server: ParsedServer, loaded: ReadonlySet<string>): string | undefined {
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
function planServerUpdate(deployedContext: ServerSection, old: ParsedServer, desiredContext: ServerSection, next: ParsedServer): RuntimeOperation | string | undefined {
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
