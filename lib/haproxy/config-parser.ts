/**
 * A structural reading of an HAProxy 2.6 configuration: sections, their
 * directive lines as words, and backend servers as ServerSpecs. It is enough
 * to compare two configurations and to find directives; it is not a
 * validator (`haproxy -c` is).
 */
import type { ServerSpec } from './plan-types.ts';

export interface TokenizedLine {
  readonly words: string[];
  /** The text after an unquoted, unescaped `#`, as written; undefined when there is none. */
  readonly comment: string | undefined;
  /**
   * Indexes of the words HAProxy would take (in part) from its environment:
   * a `$` inside double quotes, not escaped, starting a variable name
   * (`"${NAME}"`, `"$NAME"`, `"${.LINE}"`). Unquoted and single-quoted `$`
   * are literal in a configuration file.
   */
  readonly variables: readonly number[];
}

export interface ConfigLine {
  readonly words: readonly string[];
  /** 1-based line number in the configuration text. */
  readonly line: number;
}

export type ParsedServer = ServerSpec & { readonly line: number };

export interface Section {
  /** A section keyword, or '' for the lines before the first section. */
  readonly keyword: string;
  readonly name: string | undefined;
  /** The header line's words, e.g. ["backend", "web", "from", "tuned"]: they can carry more than the name. */
  readonly words: readonly string[];
  readonly line: number;
  /** Directive lines without the server lines of backends and listens (those are in `servers`). */
  readonly lines: readonly ConfigLine[];
  readonly servers: readonly ParsedServer[];
  /**
   * The section's text, from its first line to the next section's: two
   * sections of equal text say the same, so planning compares them no
   * further (most sections of a configuration are the same after a change).
   */
  readonly source: string;
}

export interface ParsedConfig {
  readonly sections: readonly Section[];
}

/** The section keywords of HAProxy 2.6 (cfg_register_section calls). */
export const SECTION_KEYWORDS: ReadonlySet<string> = new Set([
  'global',
  'defaults',
  'frontend',
  'backend',
  'listen',
  'userlist',
  'peers',
  'resolvers',
  'mailers',
  'program',
  'http-errors',
  'ring',
  'cache',
  'fcgi-app',
  'log-forward',
]);

/** Sections whose `server` lines are load-balanced servers (peers and rings have `server` lines too). */
const SERVER_SECTIONS: ReadonlySet<string> = new Set(['backend', 'listen']);

/** isspace() without \n and \r, which end the line in HAProxy's reader. */
function isSeparator(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\v' || char === '\f';
}

function isHexDigit(char: string | undefined): boolean {
  return char !== undefined && /^[0-9a-fA-F]$/.test(char);
}

/** What makes a line more than words between separators: quotes, escapes, comments, line ends. A `$` only counts inside double quotes. */
const SPECIAL = /["'\\#\r\n]/;
const NONE: readonly number[] = [];

/** The runs between separators, each sliced once from the line (a rendered configuration has some hundred thousand lines). */
function plainWords(line: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i < line.length; i++) {
    if (isSeparator(line.charAt(i))) {
      if (start >= 0) words.push(line.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  if (start >= 0) words.push(line.slice(start));
  return words;
}

/**
 * Splits one configuration line into words the way HAProxy 2.6's parse_line
 * does for configuration files, checked against haproxy 2.6.12 itself:
 * - leading separators are skipped; runs of spaces/tabs separate words;
 * - `#` outside quotes starts a comment; `\r` or `\n` end the line;
 * - double quotes group (backslash escapes still apply inside them), single
 *   quotes group literally; quotes are removed, so `a"b c"d` is one word;
 * - `\ `, `\\`, `\#`, `\"`, `\'` give the character, `\t` `\n` `\r` the
 *   control character, `\xHH` the character with that code; any other
 *   backslash stays as written (`\z` is the two characters `\z`);
 * - an empty quoted word is a word (`a "" b` has three), except at the very
 *   end of the line, which HAProxy drops.
 * Deliberate differences, because the controller neither runs HAProxy nor
 * knows its environment: `"$VAR"` and `"${VAR}"` are not expanded and `\$`
 * keeps its backslash (so an escaped dollar stays distinguishable from a
 * variable); where HAProxy reports an error (unclosed quote, bad `\x`
 * sequence) this tokenizer is lenient (the quote runs to the end of the
 * line, `\x` stays as written) and leaves the error to `haproxy -c`.
 */
export function tokenizeLine(line: string): TokenizedLine {
  // Most rendered lines hold nothing the rules below treat specially: their words are the runs between separators.
  if (!SPECIAL.test(line)) return { words: plainWords(line), comment: undefined, variables: NONE };
  const words: string[] = [];
  const variables: number[] = [];
  let comment: string | undefined;
  let word = '';
  let squote = false;
  let dquote = false;
  let i = 0;
  while (i < line.length && isSeparator(line.charAt(i))) i++;
  while (i < line.length) {
    const char = line.charAt(i);
    if (char === '\n' || char === '\r') break;
    if (char === '#' && !squote && !dquote) {
      comment = line.slice(i + 1).split(/[\r\n]/, 1)[0];
      break;
    }
    if (char === '"' && !squote) {
      dquote = !dquote;
      i++;
    } else if (char === "'" && !dquote) {
      squote = !squote;
      i++;
    } else if (char === '\\' && !squote) {
      const next = line.charAt(i + 1);
      if (next === ' ' || next === '\\' || next === '#' || next === '"' || next === "'") {
        word += next;
        i += 2;
      } else if (next === 't' || next === 'n' || next === 'r') {
        word += next === 't' ? '\t' : next === 'n' ? '\n' : '\r';
        i += 2;
      } else if (next === 'x' && isHexDigit(line[i + 2]) && isHexDigit(line[i + 3])) {
        word += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
      } else if (next === '$') {
        word += '\\$';
        i += 2;
      } else {
        word += char;
        i++;
      }
    } else if (char === '$' && dquote && /^[A-Za-z_.{]/.test(line.charAt(i + 1))) {
      if (variables.at(-1) !== words.length) variables.push(words.length);
      word += char;
      i++;
    } else if (isSeparator(char) && !squote && !dquote) {
      while (i < line.length && isSeparator(line.charAt(i))) i++;
      words.push(word);
      word = '';
    } else {
      word += char;
      i++;
    }
  }
  if (word !== '') words.push(word);
  return { words, comment, variables };
}

/**
 * Splits a server address into address and port the way HAProxy's
 * str2sa_range does: `[v6]:port` in brackets, otherwise the port follows the
 * LAST colon (`fd00::1:8080`), so a bare IPv6 address needs brackets. The
 * `ipv4@`/`ipv6@` family hints are dropped since the address itself says
 * the family and `set server addr` refuses them. Without a port (HAProxy
 * then uses the client's destination port) the port is 0. Anything else
 * (another `proto@` prefix, a UNIX socket path, a port offset such as
 * `:+1`) is kept whole as the address with port 0, so a planner sees an
 * address it cannot set at runtime.
 */
function parseServerAddress(text: string): { address: string; port: number } {
  const hint = /^ipv[46]@/.exec(text);
  if (!hint && (text.includes('@') || text.startsWith('/'))) return { address: text, port: 0 };
  const rest = hint ? text.slice(hint[0].length) : text;
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(rest);
  if (bracketed) return { address: bracketed[1] ?? '', port: bracketed[2] === undefined ? 0 : Number(bracketed[2]) };
  const colon = rest.lastIndexOf(':');
  if (colon < 0) return { address: rest, port: 0 };
  const port = rest.slice(colon + 1);
  if (!/^\d+$/.test(port)) return { address: text, port: 0 };
  return { address: rest.slice(0, colon), port: Number(port) };
}

function parseServer(words: readonly string[], line: number): ParsedServer {
  const options = words.slice(3);
  let weight: number | undefined;
  let disabled = false;
  // Server keywords apply in order, so the last weight and the last of disabled/enabled win.
  for (let i = 0; i < options.length; i++) {
    const option = options[i];
    if (option === 'weight' && /^\d+$/.test(options[i + 1] ?? '')) weight = Number(options[++i]);
    else if (option === 'disabled') disabled = true;
    else if (option === 'enabled') disabled = false;
  }
  const { address, port } = parseServerAddress(words[2] ?? '');
  return { name: words[1] ?? '', address, port, options, weight, disabled, line };
}

/**
 * The first word of the line between `start` and `end` when reading its
 * characters is enough to know it (letters, digits, `-`, `_` and `.`, then
 * a separator, a comment or the end); '' for a line without words; undefined
 * when the line must be tokenized to know it (a quote, an escape).
 */
function plainFirstWord(text: string, start: number, end: number): string | undefined {
  let i = start;
  // Space, \t, \v, \f: isSeparator's characters, by code, for the whole text is scanned.
  const separator = (code: number) => code === 32 || code === 9 || code === 11 || code === 12;
  while (i < end && separator(text.charCodeAt(i))) i++;
  const from = i;
  for (; i < end; i++) {
    const code = text.charCodeAt(i);
    const plain = (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 95 || code === 46;
    if (!plain) break;
  }
  if (i === end) return text.slice(from, i);
  const stop = text.charCodeAt(i);
  // \r ends the line; # starts a comment.
  if (stop === 13 || stop === 35 || separator(stop)) return text.slice(from, i);
  return undefined;
}

/**
 * Visits each line of a configuration text with its first word (undefined
 * for a line without words), where it starts and ends in the text and its
 * 1-based number, until `visit` returns false. Only a line that must be
 * tokenized to know its first word is cut out of the text: reading a large
 * configuration line by line this way leaves no array of its lines, nor a
 * copy of each, alive while it is read (split('\n') keeps them all until the
 * end, long enough for V8 to move them to its old space).
 */
export function scanLines(text: string, visit: (first: string | undefined, start: number, end: number, line: number) => boolean | void): void {
  let line = 0;
  for (let start = 0; start <= text.length;) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    line++;
    const plain = plainFirstWord(text, start, end);
    const first = plain === '' ? undefined : (plain ?? tokenizeLine(text.slice(start, end)).words[0]);
    if (visit(first, start, end, line) === false || newline === -1) return;
    start = newline + 1;
  }
}

/** A section as the parser finds it: its header read, its body lines tokenized when first asked for. */
class LazySection implements Section {
  readonly keyword: string;
  readonly name: string | undefined;
  readonly words: readonly string[];
  readonly line: number;
  readonly source: string;
  /** The index in the source's lines of the first body line (1 after a header; 0 for the pseudo section). */
  readonly #bodyFrom: number;
  #body: { readonly lines: ConfigLine[]; readonly servers: ParsedServer[] } | undefined;

  constructor(fields: Omit<Section, 'lines' | 'servers'>, bodyFrom: number) {
    this.keyword = fields.keyword;
    this.name = fields.name;
    this.words = fields.words;
    this.line = fields.line;
    this.source = fields.source;
    this.#bodyFrom = bodyFrom;
  }

  get lines(): readonly ConfigLine[] {
    return this.#read().lines;
  }

  get servers(): readonly ParsedServer[] {
    return this.#read().servers;
  }

  #read(): { readonly lines: ConfigLine[]; readonly servers: ParsedServer[] } {
    if (this.#body) return this.#body;
    const body = { lines: [] as ConfigLine[], servers: [] as ParsedServer[] };
    const raws = this.source.split('\n');
    for (let index = this.#bodyFrom; index < raws.length; index++) {
      const { words } = tokenizeLine(raws[index]!);
      const first = words[0];
      if (first === undefined || first === '') continue;
      const line = this.line + index;
      if (first === 'server' && words.length >= 3 && SERVER_SECTIONS.has(this.keyword)) body.servers.push(parseServer(words, line));
      else body.lines.push({ words, line });
    }
    this.#body = body;
    return body;
  }
}

/** The section name; `defaults from <other>` is an unnamed defaults section inheriting from <other>. */
function sectionName(words: readonly string[]): string | undefined {
  if (words[0] === 'defaults' && words[1] === 'from' && words.length > 2) return undefined;
  return words[1];
}

/**
 * Parses a configuration into sections. Blank and comment-only lines are
 * dropped, as are lines whose first word is empty (`"" x`: HAProxy skips
 * them as empty). Lines before the first section keyword form a pseudo
 * section with keyword '' that exists only when there are such lines.
 * Conditional blocks (`.if`/`.endif`) are not evaluated: they stay ordinary
 * lines of the section they appear in. A `server` line with fewer than three
 * words is invalid for HAProxy and stays in `lines`. Only the section headers
 * are read at once; a section's lines and servers when first asked for,
 * since planning compares most sections by their text alone.
 */
export function parseConfig(text: string): ParsedConfig {
  const found: { fields: Omit<Section, 'lines' | 'servers' | 'source'>; start: number; bodyFrom: number }[] = [];
  scanLines(text, (first, start, end, line) => {
    if (first === undefined || first === '') return;
    if (SECTION_KEYWORDS.has(first)) {
      const { words } = tokenizeLine(text.slice(start, end));
      found.push({ fields: { keyword: first, name: sectionName(words), words, line }, start, bodyFrom: 1 });
    } else if (found.length === 0) {
      found.push({ fields: { keyword: '', name: undefined, words: [], line }, start, bodyFrom: 0 });
    }
  });
  const sections = found.map(({ fields, start, bodyFrom }, index) => new LazySection({ ...fields, source: text.slice(start, found[index + 1]?.start ?? text.length) }, bodyFrom));
  return { sections };
}
