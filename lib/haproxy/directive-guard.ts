import { scanLines, SECTION_KEYWORDS, tokenizeLine } from './config-parser.ts';
import { guardedDirectives, type GuardedDirective } from '../config/guarded-directives.ts';
import { CONTROLLER_LUA } from '../lua/controller-scripts.ts';

export interface GuardFinding {
  /** 1-based line of the rendered configuration. */
  readonly line: number;
  readonly directive: GuardedDirective;
  /** What the directive does, for the message. */
  readonly reason: string;
  /** True when allowDirectives cannot allow it (a keyword or file name taken from the environment). */
  readonly always: boolean;
  readonly text: string;
}

/** Directives that run code, load native code, or change the process and the environment of what it starts. */
const codeDirectives = new Set<string>([
  'lua-load',
  'lua-load-per-thread',
  'lua-prepend-path',
  'ssl-engine',
  'ssl-provider',
  'ssl-provider-path',
  'external-check',
  'setenv',
  'presetenv',
  'resetenv',
  'unsetenv',
  'insecure-fork-wanted',
  'insecure-setuid-wanted',
  'set-dumpable',
]);

/**
 * Keywords whose next word is a file or directory HAProxy reads (or, for
 * `pidfile`, writes), from HAProxy 2.6's configuration manual: global
 * settings, bind and server options, and `-f` of ACLs.
 */
const fileArguments = new Set([
  'crt',
  'crt-list',
  'ca-file',
  'crl-file',
  'ca-verify-file',
  'ca-sign-file',
  'tls-ticket-keys',
  'crt-base',
  'ca-base',
  'key-base',
  'ssl-dh-param-file',
  'issuers-chain-path',
  'h1-case-adjust-file',
  'server-state-file',
  'server-state-base',
  'server-state-file-name',
  'httpclient.ssl.ca-file',
  '51degrees-data-file',
  'wurfl-data-file',
  'deviceatlas-json-file',
  'pidfile',
  '-f',
]);

/** Rules that answer with a response, whose `file`, `lf-file` and `errorfile` arguments are files served as it. */
const ruleKeywords = /^(?:http-request|http-response|http-after-response|tcp-request|tcp-response)$/;
const responseActions = new Set(['return', 'deny', 'tarpit']);
const responseFiles = new Set(['file', 'lf-file', 'errorfile']);

/** Sample converters, fetches and actions whose first argument is a file (maps, pattern files). */
const fileFunction = /\b(?:map(?:_[a-z]+)*|pat_ref|add-acl|del-acl)\(([^,)]*)/g;

/** `ca-file @system-ca` names the system's store, not a file. */
const specialFiles = new Set(['@system-ca']);

/**
 * The directory of `default-path origin <dir>` in the global section: the
 * base directory the configuration's files are read under. Undefined
 * without one, and for `/`, under which every file would be.
 */
export function baseDirectory(config: string): string | undefined {
  let section: string | undefined;
  let found: string | undefined;
  scanLines(config, (first, start, end) => {
    if (first === undefined) return true;
    if (SECTION_KEYWORDS.has(first)) section = first;
    else if (section === 'global' && first === 'default-path') {
      const [, second, third] = tokenizeLine(config.slice(start, end)).words;
      if (second !== 'origin' || third === undefined) return true;
      const base = third.replace(/\/+$/, '');
      found = base.startsWith('/') && !base.split('/').includes('..') ? base : undefined;
      return false;
    }
    return true;
  });
  return found;
}

/** A relative path without `..`, or an absolute one under the base directory; never one with a variable. */
function outsideBase(path: string, base: string | undefined): boolean {
  if (specialFiles.has(path)) return false;
  if (path.includes('$') || path.split('/').includes('..')) return true;
  return path.startsWith('/') && (base === undefined || !path.startsWith(`${base}/`));
}

/** The file paths a line reads, by the keyword or converter that reads them, with the index of the word each is. */
function filesRead(words: readonly string[]): { readonly path: string; readonly index: number }[] {
  const files: { path: string; index: number }[] = [];
  if (words[0] === 'errorfile' && words[2] !== undefined) files.push({ path: words[2], index: 2 });
  // `filter spoe ... config <file>`, `filter opentracing ... config <file>`.
  const config = words[0] === 'filter' ? words.indexOf('config') : -1;
  if (config > 0 && words[config + 1] !== undefined) files.push({ path: words[config + 1]!, index: config + 1 });
  words.forEach((word, i) => {
    const next = words[i + 1];
    if (fileArguments.has(word) && next !== undefined) files.push({ path: next, index: i + 1 });
    // Each function names its file in parentheses: a word without one names none (most words, the cheap test first).
    if (word.includes('(')) for (const match of word.matchAll(fileFunction)) files.push({ path: match[1]!, index: i });
  });
  return files;
}

/**
 * `lua-load` of one of the controller's own scripts (lib/lua/controller-scripts.ts), by a
 * path under the base directory: the renderer writes that file over any
 * other of its name and no template may render one, so it runs the
 * controller's code, never a template's.
 */
function loadsControllerLua(words: readonly string[], base: string | undefined): boolean {
  const [first, path, extra] = words;
  return first === 'lua-load' && path !== undefined && extra === undefined && base !== undefined && CONTROLLER_LUA.has(path.split('/').at(-1)!) && !outsideBase(path, base);
}

function servesFile(words: readonly string[]): boolean {
  const from = words[0] === 'http-error' ? 1 : ruleKeywords.test(words[0] ?? '') ? words.findIndex((word) => responseActions.has(word)) : -1;
  return from > 0 && words.slice(from).some((word) => responseFiles.has(word));
}

function finding(directive: GuardedDirective, always = false): { readonly directive: GuardedDirective; readonly reason: string; readonly always: boolean } {
  return { directive, reason: guardedDirectives[directive], always };
}

/** Everything the guard refuses on one line, the directive first. */
function guarded(words: readonly string[], variables: readonly number[], base: string | undefined): ReturnType<typeof finding>[] {
  const [first, second] = words;
  if (first === undefined) return [];
  const found: ReturnType<typeof finding>[] = [];
  const files = filesRead(words);
  // A variable may hold any keyword or path: what it names cannot be checked, so it is never allowed
  // there; nor is one spread into several words ("${NAME[*]}"), which can be a whole directive.
  const keyword = variables.includes(0) || variables.some((index) => words[index]!.includes('[*]}'));
  if (keyword || files.some((file) => variables.includes(file.index))) found.push(finding('environment-variables', true));
  else if (variables.length > 0) found.push(finding('environment-variables'));
  if (first === 'program') found.push(finding('program'));
  else if (codeDirectives.has(first) && !loadsControllerLua(words, base)) found.push(finding(first as GuardedDirective));
  else if (first === 'option' && second === 'external-check') found.push(finding('external-check'));
  else if (servesFile(words)) found.push(finding('return-file'));
  else if (files.some((file) => outsideBase(file.path, base))) found.push(finding('files-outside-base'));
  return found;
}

/**
 * Finds the directives of a rendered configuration that run code, read
 * files outside the base directory, or take keywords and file names from
 * the environment. Defence in depth: escaping already keeps object values
 * from adding directives, this catches what templates add. A line may
 * carry several findings; each is allowed (or not) on its own. Files may
 * be named relative to the base directory or by absolute paths under its
 * `default-path origin`.
 */
export function findGuardedDirectives(config: string): GuardFinding[] {
  const findings: GuardFinding[] = [];
  const base = baseDirectory(config);
  // Line by line, not split('\n'): each line's text and words are garbage once read (see scanLines).
  for (let start = 0, line = 1; start <= config.length; line++) {
    const newline = config.indexOf('\n', start);
    const text = config.slice(start, newline === -1 ? config.length : newline);
    const { words, variables } = tokenizeLine(text);
    for (const found of guarded(words, variables, base)) findings.push({ line, ...found, text: text.trim() });
    if (newline === -1) break;
    start = newline + 1;
  }
  return findings;
}
