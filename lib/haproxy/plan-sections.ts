/**
 * Compares two configurations section by section by what they mean to
 * HAProxy, not by where their lines are: the Data Plane API stores a
 * configuration as its parser writes it back (docs/dataplane-api-contract.md
 * §3a), with sections regrouped by type, names sorted, an unnamed defaults
 * section named `unnamed_defaults_<n>` and the lines of a section grouped
 * per keyword. None of that changes what HAProxy does, so none of it is a
 * difference here. What does change it is kept: the order of the lines of
 * one keyword (http-request rules, use_backend, acl, bind...), the defaults
 * section each proxy inherits from, and, in a section with conditional
 * blocks (`.if`), the order of every line.
 */
import { compareCodeUnits } from '../compare.ts';
import type { ConfigLine, ParsedConfig, Section } from './config-parser.ts';

/** A section with its identity as the Data Plane API's parser gives it. */
export interface NamedSection {
  readonly section: Section;
  /** `<keyword> <name>`, an unnamed defaults section named as config-parser names it. */
  readonly key: string;
  /** The defaults section a proxy inherits from (its `from`, else the last one before it), by key name. */
  readonly inherits: string | undefined;
}

export interface NamedSections {
  /** In text order. */
  readonly sections: readonly NamedSection[];
  readonly byKey: ReadonlyMap<string, NamedSection>;
  /** Sections whose key is used more than once (HAProxy refuses those, the parser keeps the last). */
  readonly duplicates: readonly string[];
}

const PROXIES: ReadonlySet<string> = new Set(['frontend', 'backend', 'listen']);

/** Keywords whose second word names a setting of its own, with its own place in the parser's sequence. */
const TWO_WORD_KEYWORDS: ReadonlySet<string> = new Set(['option', 'timeout', 'compression', 'stats', 'capture', 'external-check', 'rate-limit', 'errorfile']);

export function sectionLabel(section: Section): string {
  if (section.keyword === '') return 'lines before the first section';
  return section.name === undefined ? section.keyword : `${section.keyword} ${section.name}`;
}

/** `from <name>` in a section header: `backend b from d`, `defaults d from e`, `defaults from e`. */
function fromName(section: Section): string | undefined {
  const { words } = section;
  if (section.keyword === 'defaults' && section.name === undefined && words[1] === 'from') return words[2];
  return words[2] === 'from' ? words[3] : undefined;
}

/**
 * Names every section: an unnamed defaults section gets the first
 * `unnamed_defaults_<n>` no earlier defaults section has (config-parser
 * reader.go), and each proxy the defaults section it inherits from.
 */
export function nameSections(config: ParsedConfig): NamedSections {
  const sections: NamedSection[] = [];
  const byKey = new Map<string, NamedSection>();
  const duplicates: string[] = [];
  const defaultsNames = new Set<string>();
  let lastDefaults: string | undefined;
  for (const section of config.sections) {
    let name = section.name;
    if (section.keyword === 'defaults') {
      if (name === undefined) {
        let n = 1;
        while (defaultsNames.has(`unnamed_defaults_${n}`)) n++;
        name = `unnamed_defaults_${n}`;
      }
      defaultsNames.add(name);
    }
    const from = fromName(section);
    const inherits = PROXIES.has(section.keyword) ? (from ?? lastDefaults) : from;
    if (section.keyword === 'defaults') lastDefaults = name;
    const key = name === undefined ? section.keyword : `${section.keyword} ${name}`;
    const named: NamedSection = { section, key, inherits };
    if (byKey.has(key)) duplicates.push(key);
    byKey.set(key, named);
    sections.push(named);
  }
  return { sections, byKey, duplicates };
}

/**
 * The defaults sections a section inherits from, nearest first: the one it
 * names or follows, then whatever that one names with its own `from`.
 */
export function defaultsChain(config: NamedSections, section: NamedSection): Section[] {
  const chain: Section[] = [];
  let name = section.inherits;
  while (name !== undefined) {
    const found = config.byKey.get(`defaults ${name}`);
    if (found === undefined || chain.includes(found.section)) break;
    chain.push(found.section);
    name = found.inherits;
  }
  return chain;
}

export function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, index) => word === b[index]);
}

/** Words as they could be written back, for reasons a user reads. */
export function showWords(words: readonly string[]): string {
  return words
    .map((word) => {
      if (/^[^\s#"'\\]+$/.test(word)) return word;
      return word.includes("'") ? JSON.stringify(word) : `'${word}'`;
    })
    .join(' ');
}

/** The keyword a line belongs to: `no` set aside, two words for the keyword families in TWO_WORD_KEYWORDS. */
function keywordOf(words: readonly string[]): string {
  const effective = words[0] === 'no' ? words.slice(1) : words;
  const first = effective[0] ?? '';
  return TWO_WORD_KEYWORDS.has(first) && effective[1] !== undefined ? `${first} ${effective[1]}` : first;
}

/** Lines grouped by keyword, in order within each group; one group when conditional blocks make every position count. */
function groups(lines: readonly ConfigLine[]): Map<string, ConfigLine[]> {
  const strict = lines.some((line) => line.words[0]?.startsWith('.'));
  const grouped = new Map<string, ConfigLine[]>();
  for (const line of lines) {
    const key = strict ? '' : keywordOf(line.words);
    const group = grouped.get(key) ?? [];
    group.push(line);
    grouped.set(key, group);
  }
  return grouped;
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

/** The header without its name and `from`: what else it says (peers and the like have nothing else either). */
function headerRest(named: NamedSection): readonly string[] {
  const { words, keyword } = named.section;
  const rest = keyword === 'defaults' && named.section.name === undefined ? words.slice(1) : words.slice(2);
  return rest[0] === 'from' ? rest.slice(2) : rest;
}

function headerReason(before: NamedSection, after: NamedSection): string | undefined {
  const label = sectionLabel(after.section);
  if (!sameWords(headerRest(before), headerRest(after))) {
    return `${label}: header changed from "${showWords(before.section.words)}" to "${showWords(after.section.words)}"`;
  }
  if (before.inherits !== after.inherits) {
    const was = before.inherits === undefined ? 'no defaults section' : `defaults ${before.inherits}`;
    return `${label}: inherits from ${after.inherits === undefined ? 'no defaults section' : `defaults ${after.inherits}`} instead of ${was}`;
  }
  return undefined;
}

function sectionReason(before: NamedSection, after: NamedSection): string | undefined {
  // The same text says the same header and lines; only what it inherits may differ.
  if (before.section.source === after.section.source && before.inherits === after.inherits) return undefined;
  const header = headerReason(before, after);
  if (header !== undefined) return header;
  const label = sectionLabel(after.section);
  const old = groups(before.section.lines);
  const next = groups(after.section.lines);
  // Groups in the order of the desired section's lines, then those only the deployed one has.
  for (const key of new Set([...next.keys(), ...old.keys()])) {
    const reason = linesReason(label, old.get(key) ?? [], next.get(key) ?? []);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * The first difference that needs a reload between the sections of two
 * configurations (servers of backends and listens aside: the caller plans
 * those), or undefined when they mean the same.
 */
export function sectionsReason(deployed: NamedSections, desired: NamedSections): string | undefined {
  const duplicate = [...desired.duplicates].sort(compareCodeUnits)[0];
  if (duplicate !== undefined) return `${duplicate} defined twice`;
  const added = desired.sections.find((named) => !deployed.byKey.has(named.key));
  if (added !== undefined) return `${sectionLabel(added.section)} added`;
  const removed = deployed.sections.find((named) => !desired.byKey.has(named.key));
  if (removed !== undefined) return `${sectionLabel(removed.section)} removed`;
  for (const after of desired.sections) {
    const reason = sectionReason(deployed.byKey.get(after.key)!, after);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
