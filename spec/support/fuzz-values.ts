/**
 * Building blocks for fuzz specs: a seeded PRNG, hostile strings, and the
 * enumeration and replacement of every scalar field of a Kubernetes object.
 * Everything is deterministic given the seed, so a failure reproduces from
 * the seed and iteration it reports.
 */

/** A path into an object: property names and array indexes. */
export type FieldPath = readonly (string | number)[];

/** mulberry32: tiny, fast and good enough to drive a fuzzer; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Random {
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.#next() * bound);
  }

  chance(probability: number): boolean {
    return this.#next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  }
}

/**
 * Appears in every injected payload and must never reach an output file: its
 * presence there means a hostile value got through.
 */
export const MARKER = 'fuzzmark';

/** Single characters that mean something to HAProxy, map files or line-based parsers. */
const HOSTILE_CHARACTERS = [
  '\n',
  '\r',
  '\r\n',
  '\0',
  '\u0007',
  '\u001b',
  '\u007f',
  '#',
  '"',
  "'",
  '\\',
  ' ',
  '\t',
  '\v',
  '\f',
  '%[',
  '${',
  '$',
  '{',
  '}',
  '(',
  ')',
  ',',
  ';',
  '%',
  '[',
  ']',
  '<',
  '>',
  '|',
  '`',
  '^',
] as const;

/**
 * Non-ASCII that tends to slip through naive checks: line separators
 * (JavaScript's and Unicode's), bidi overrides, zero-width and no-break
 * spaces, characters whose lowercase or NFKC form is ASCII (the Kelvin sign
 * lowercases to 'k', fullwidth letters normalise to ASCII), homoglyphs,
 * emoji and a lone surrogate.
 */
const HOSTILE_UNICODE = ['\u2028', '\u2029', '\u0085', '\u202e', '\u200f', '\u200b', '\u00a0', '\ufeff', '\u212a', '\u0130', '\uff45', '\u0455', 'é', '😀', '\ud800'] as const;

/** Whole directives or expressions a value could smuggle in if a check let it through. */
const INJECTIONS = [
  `\n  lua-load /tmp/${MARKER}.lua`,
  `\r\n  lua-load /tmp/${MARKER}.lua`,
  `\u2028  lua-load /tmp/${MARKER}.lua`,
  `\n\nbackend ${MARKER}\n  server ${MARKER} 127.0.0.1:1`,
  `\n  http-request deny if { path /${MARKER} }`,
  ` ${MARKER}`,
  `\t${MARKER}`,
  `#${MARKER}`,
  ` #${MARKER}`,
  `%[env(${MARKER})]`,
  `%[req.hdr(${MARKER})]`,
  `\${${MARKER}}`,
  `"${MARKER}"`,
  `'${MARKER}'`,
  `\\\n${MARKER}`,
  `{ always_true } ${MARKER}`,
  `,lower,map(/etc/${MARKER})`,
  ` ${MARKER}.example.com ${MARKER}.example.com`,
  `\0${MARKER}`,
] as const;

/** Valid-looking starts, so a check that only looks at the beginning of a value is caught. */
const PREFIXES = [
  '',
  'example.com',
  'shop.example.com',
  '*.example.com',
  '/',
  '/api',
  'web',
  'http',
  'default',
  '10.0.0.1',
  'fd00::1',
  'kubernetes.io/tls',
  'Prefix',
  'Exact',
  '8080',
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t',
] as const;

/** Characters every field check lets through somewhere, for long values made only of them. */
const PLAIN = 'abcdefghijklmnopqrstuvwxyz0123456789-.';

function insertAt(text: string, position: number, piece: string): string {
  return text.slice(0, position) + piece + text.slice(position);
}

/**
 * Whether a value is unsafe on a configuration line: it holds anything
 * outside the renderer's safe word characters, starts with '-' or '!', or is
 * longer than any field check admits. Generated values must all be, so that
 * a value that comes out unchanged in a file is a leak, never a valid input.
 */
export function isHostile(value: string): boolean {
  return value.length > 1024 || /^[-!]/.test(value) || /[^A-Za-z0-9._~:/@!*+=&?%-]/.test(value) || value.includes('%[');
}

/**
 * A hostile string: a valid-looking start (often the field's own value) with
 * hostile characters, Unicode or whole injected directives spliced in;
 * sometimes a very long value, with or without a hostile tail.
 */
export function hostileString(random: Random, original: string): string {
  for (;;) {
    const value = candidate(random, original);
    if (isHostile(value) && value !== original) return value;
  }
}

function candidate(random: Random, original: string): string {
  const base = random.chance(0.4) ? original : random.pick(PREFIXES);
  const shape = random.int(10);
  if (shape < 6) {
    let value = base;
    const pieces = 1 + random.int(4);
    for (let i = 0; i < pieces; i++) {
      const pool = random.int(3);
      const piece = pool === 0 ? random.pick(HOSTILE_CHARACTERS) : pool === 1 ? random.pick(HOSTILE_UNICODE) : random.pick(INJECTIONS);
      // Mostly at the end (where a "starts with" check looks away), sometimes anywhere.
      value = insertAt(value, random.chance(0.6) ? value.length : random.int(value.length + 1), piece);
    }
    return value;
  }
  if (shape < 8) {
    // Long values: past the renderer's 1024-character cap and HAProxy's
    // line buffer, so truncation anywhere would show up as a split line.
    const length = 1000 + random.int(1300);
    const filler = random.chance(0.5) ? 'a'.repeat(length) : Array.from({ length }, () => random.pick([...PLAIN])).join('');
    const tail = random.chance(0.5) ? random.pick(INJECTIONS) : '';
    return `${base}${filler}${tail}`;
  }
  if (shape < 9) {
    // A value that would pass a check that lowercases or normalises first.
    return base.replace(/[a-z]/, (letter) => (letter === 'k' ? '\u212a' : String.fromCharCode(letter.charCodeAt(0) + 0xfee0)));
  }
  return `${random.pick(['-', '!'])}${base || 'web'}`;
}

/** A field to replace: where it is, and what it holds in the valid world. */
export interface Leaf {
  readonly path: FieldPath;
  /** True when the path's last segment is a mapping key that gets renamed rather than a value that gets replaced. */
  readonly isKey: boolean;
  /** The original value as text (a key is its own value). */
  readonly value: string;
  readonly type: 'string' | 'number' | 'boolean';
}

/**
 * Values of the wrong type, each invalid where the original type is
 * expected: no API server lets them through for built-in types, but the view
 * model promises not to rely on that. Never null or false for a string
 * (absent and false have meanings of their own there, e.g. a host-less rule).
 */
const WRONG_TYPES: Readonly<Record<Leaf['type'], readonly unknown[]>> = {
  string: [0, 1, -1, 1.5, true, [], ['x'], {}, { name: MARKER }],
  number: ['8080', '80', `80 ${MARKER}`, 0, -1, 65536, 1.5, 1e21, null, true, [], {}],
  boolean: ['false', 'true', 0, 1, null, [], {}],
};

/**
 * Mostly a hostile string; sometimes a value of the wrong type. Object
 * names, namespaces and mapping keys stay strings: the API guarantees their
 * type, and the stores key objects by them.
 */
export function hostileValue(random: Random, leaf: Leaf): unknown {
  const name = leaf.path.length === 2 && leaf.path[0] === 'metadata' && (leaf.path[1] === 'name' || leaf.path[1] === 'namespace');
  if (!leaf.isKey && !name && random.chance(0.15)) return random.pick(WRONG_TYPES[leaf.type]);
  return hostileString(random, leaf.value);
}

/** Mappings whose keys are data, not schema: their keys are fuzzed too. */
function hasFreeKeys(path: FieldPath): boolean {
  const last = path.at(-1);
  return last === 'labels' || last === 'annotations' || last === 'data';
}

/**
 * Every scalar (string, number, boolean) of an object, and every key of its
 * labels, annotations and data, in a stable depth-first order.
 */
export function scalarLeaves(object: unknown): Leaf[] {
  const leaves: Leaf[] = [];
  const visit = (value: unknown, path: FieldPath): void => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      leaves.push({ path, isKey: false, value: String(value), type: typeof value as Leaf['type'] });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, [...path, index]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (hasFreeKeys(path)) leaves.push({ path: [...path, key], isKey: true, value: key, type: 'string' });
        visit(item, [...path, key]);
      }
    }
  };
  visit(object, []);
  return leaves;
}

/** A deep copy of a JSON-shaped value with the leaf replaced (a value set, or a key renamed in place). */
export function replaceLeaf<T>(object: T, leaf: Leaf, replacement: unknown): T {
  const copy = structuredClone(object);
  const parentPath = leaf.path.slice(0, -1);
  const last = leaf.path.at(-1)!;
  let parent: unknown = copy;
  for (const segment of parentPath) parent = (parent as Record<string | number, unknown>)[segment];
  if (leaf.isKey) {
    // Rebuilt to keep key order: the renamed key stays where the old one was.
    const entries = Object.entries(parent as Record<string, unknown>).map(([key, value]): [string, unknown] => (key === last ? [String(replacement), value] : [key, value]));
    const target = parent as Record<string, unknown>;
    for (const key of Object.keys(target)) delete target[key];
    Object.assign(target, Object.fromEntries(entries));
  } else {
    (parent as Record<string | number, unknown>)[last] = replacement;
  }
  return copy;
}

/** `spec.rules[0].host`, `metadata.labels['kubernetes.io/service-name']`: how failures name a field. */
export function formatPath(path: FieldPath): string {
  return path
    .map((segment, i) => {
      if (typeof segment === 'number') return `[${segment}]`;
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) return i === 0 ? segment : `.${segment}`;
      return `[${JSON.stringify(segment)}]`;
    })
    .join('');
}

/**
 * The segments of a Problem's field (`spec.rules[0].http.paths[1].path`,
 * `data[tls.crt]`), as strings, to compare with a FieldPath.
 */
export function parseFieldPath(field: string): string[] {
  const segments: string[] = [];
  let i = 0;
  while (i < field.length) {
    if (field[i] === '.') {
      i++;
    } else if (field[i] === '[') {
      const end = field.indexOf(']', i);
      const inner = field.slice(i + 1, end < 0 ? field.length : end);
      segments.push(inner.replace(/^(['"])(.*)\1$/, '$2'));
      i = end < 0 ? field.length : end + 1;
    } else {
      const match = /^[^.[]+/.exec(field.slice(i))![0];
      segments.push(match);
      i += match.length;
    }
  }
  return segments;
}
