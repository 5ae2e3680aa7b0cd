import { SECTION_KEYWORDS, tokenizeLine } from './config-parser.ts';
import type { GuardedDirective } from './guarded-directives.ts';

export interface GuardFinding {
  /** 1-based line of the rendered configuration. */
  readonly line: number;
  readonly directive: GuardedDirective;
  readonly text: string;
}

const codeDirectives = new Set<string>([
  'lua-load',
  'lua-load-per-thread',
  'lua-prepend-path',
  'ssl-engine',
  'external-check',
  'setenv',
  'presetenv',
  'resetenv',
  'unsetenv',
  'insecure-fork-wanted',
  'insecure-setuid-wanted',
]);

/** Keywords whose next word is a file HAProxy reads. */
const fileArguments = new Set([
  'crt',
  'crt-list',
  'ca-file',
  'crl-file',
  'ca-verify-file',
  'crt-base',
  'ca-base',
  'key-base',
  'ssl-dh-param-file',
  'issuers-chain-path',
  'h1-case-adjust-file',
  'server-state-file',
  'server-state-base',
  '51degrees-data-file',
  'wurfl-data-file',
  'deviceatlas-json-file',
  '-f',
]);

/** Sample converters and fetches whose first argument is a file (maps and pattern files). */
const fileFunction = /\b(?:map(?:_[a-z]+)*|pat_ref)\(([^,)]*)/g;

/**
 * The directory of `default-path origin <dir>` in the global section: the
 * base directory the configuration's files are read under. Undefined
 * without one, and for `/`, under which every file would be.
 */
export function baseDirectory(config: string): string | undefined {
  let section: string | undefined;
  for (const line of config.split('\n')) {
    const [first, second, third] = tokenizeLine(line).words;
    if (first === undefined) continue;
    if (SECTION_KEYWORDS.has(first)) section = first;
    else if (section === 'global' && first === 'default-path' && second === 'origin' && third !== undefined) {
      const base = third.replace(/\/+$/, '');
      return base.startsWith('/') && !base.split('/').includes('..') ? base : undefined;
    }
  }
  return undefined;
}

/** A relative path without `..`, or an absolute one under the base directory; never one with a variable. */
function outsideBase(path: string, base: string | undefined): boolean {
  if (path.includes('$') || path.split('/').includes('..')) return true;
  return path.startsWith('/') && (base === undefined || !path.startsWith(`${base}/`));
}

/** The file paths a line reads, by the keyword or converter that reads them. */
function filesRead(words: readonly string[]): string[] {
  const files: string[] = [];
  if (words[0] === 'errorfile' && words[2] !== undefined) files.push(words[2]);
  words.forEach((word, i) => {
    const next = words[i + 1];
    if (fileArguments.has(word) && next !== undefined) files.push(next);
    for (const match of word.matchAll(fileFunction)) files.push(match[1]!);
  });
  return files;
}

function guarded(words: readonly string[], base: string | undefined): GuardedDirective | undefined {
  const [first, second] = words;
  if (first === undefined) return undefined;
  if (first === 'program') return 'program';
  if (codeDirectives.has(first)) return first as GuardedDirective;
  if (first === 'option' && second === 'external-check') return 'external-check';
  const returns = words.indexOf('return');
  if (returns > 0 && /^(http|tcp)-/.test(first) && words.slice(returns).some((w) => w === 'file' || w === 'lf-file')) {
    return 'return-file';
  }
  if (filesRead(words).some((path) => outsideBase(path, base))) return 'files-outside-base';
  return undefined;
}

/**
 * Finds the directives of a rendered configuration that run code or read
 * files outside the base directory (relative paths, or absolute ones under
 * its `default-path origin`). Defence in depth: escaping already keeps
 * object values from adding directives, this catches what templates add.
 */
export function findGuardedDirectives(config: string): GuardFinding[] {
  const findings: GuardFinding[] = [];
  const base = baseDirectory(config);
  config.split('\n').forEach((text, index) => {
    const directive = guarded(tokenizeLine(text).words, base);
    if (directive) findings.push({ line: index + 1, directive, text: text.trim() });
  });
  return findings;
}
