/**
 * Readers of one configuration value each, shared by the sections' readers:
 * the value as its type, or undefined with the problem reported at its path.
 */
import { errorMessage } from '../error-message.ts';
import { parseDuration } from './duration.ts';
import { compilePath } from './json-path.ts';
import { describe, isMapping, unknownField, type Mapping, type Path, type Problems } from './problems.ts';
import type { Rule } from './rules.ts';
import type { CompiledPath } from './types.ts';

/** Reads one value; undefined means it was invalid and the problem is reported. */
export type Reader<T> = (value: unknown, path: Path) => T | undefined;

export function readMapping(problems: Problems, value: unknown, path: Path): Mapping | undefined {
  if (isMapping(value)) return value;
  problems.add(path, `must be a mapping, got ${describe(value)}`);
  return undefined;
}

export type Fields<K extends string> = Partial<Record<K, unknown>>;

/**
 * The known fields of a mapping, or undefined when it is not one; unknown
 * fields are reported. A field set to null (`key:` with nothing after it)
 * counts as absent, as YAML authors expect.
 */
export function fields<K extends string>(problems: Problems, value: unknown, path: Path, known: readonly K[], owner?: string): Fields<K> | undefined {
  if (readMapping(problems, value, path) === undefined) return undefined;
  const found: Partial<Record<K, unknown>> = {};
  for (const [key, item] of Object.entries(value as Mapping)) {
    if (!(known as readonly string[]).includes(key)) problems.add([...path, key], unknownField(key, known, owner));
    else if (item !== null) found[key as K] = item;
  }
  return found;
}

export function withDefault<T>(value: unknown, path: Path, fallback: T, read: Reader<T>): T {
  return value === undefined ? fallback : (read(value, path) ?? fallback);
}

export function required<T>(problems: Problems, value: unknown, path: Path, read: Reader<T>): T | undefined {
  if (value !== undefined) return read(value, path);
  problems.add(path, 'required');
  return undefined;
}

export function readString(problems: Problems, value: unknown, path: Path): string | undefined {
  if (typeof value === 'string') return value;
  problems.add(path, `must be a string, got ${describe(value)}`);
  return undefined;
}

export function readInteger(problems: Problems, value: unknown, path: Path, min: number, max = Infinity): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
  problems.add(path, `must be an integer ${range}, got ${describe(value)}`);
  return undefined;
}

export function readMatching(problems: Problems, value: unknown, path: Path, rule: Rule): string | undefined {
  const text = readString(problems, value, path);
  if (text === undefined || rule.test(text)) return text;
  problems.add(path, `must be ${rule.description}, got ${JSON.stringify(text)}`);
  return undefined;
}

export function readBoolean(problems: Problems, value: unknown, path: Path): boolean | undefined {
  if (typeof value === 'boolean') return value;
  problems.add(path, `must be true or false, got ${describe(value)}`);
  return undefined;
}

export function readList(problems: Problems, value: unknown, path: Path): readonly unknown[] | undefined {
  if (Array.isArray(value)) return value;
  problems.add(path, `must be a list, got ${describe(value)}`);
  return undefined;
}

/** The entries of a name → value mapping whose names follow the rule; the others are reported. */
export function named(problems: Problems, value: unknown, path: Path, rule: Rule): [string, unknown][] {
  return Object.entries(readMapping(problems, value, path) ?? {}).filter(([name]) => {
    if (rule.test(name)) return true;
    problems.add([...path, name], `invalid name: must be ${rule.description}`);
    return false;
  });
}

/**
 * Timers in Node.js fire at once when set beyond 2^31 - 1 ms, which would
 * turn a long interval into a busy loop; 596h is just below that.
 */
export const longestDuration = '596h';
const longestDurationMs = parseDuration(longestDuration);

function durationLimitProblem(milliseconds: number, positive: boolean): string | undefined {
  if (positive && milliseconds === 0) return 'must be longer than 0s';
  if (milliseconds > longestDurationMs) return `must be at most ${longestDuration}`;
  return undefined;
}

export function readDuration(problems: Problems, value: unknown, path: Path, positive = false): number | undefined {
  if (typeof value !== 'string') {
    problems.add(path, `must be a duration such as "500ms" or "1m30s", got ${describe(value)}`);
    return undefined;
  }
  let milliseconds: number;
  try {
    milliseconds = parseDuration(value);
  } catch (error) {
    problems.add(path, errorMessage(error));
    return undefined;
  }
  const problem = durationLimitProblem(milliseconds, positive);
  if (problem === undefined) return milliseconds;
  problems.add(path, problem);
  return undefined;
}

export function readPath(problems: Problems, value: unknown, at: Path): CompiledPath | undefined {
  const source = readString(problems, value, at);
  if (source === undefined) return undefined;
  try {
    return compilePath(source);
  } catch (error) {
    problems.add(at, errorMessage(error));
    return undefined;
  }
}

export function readPaths(problems: Problems, value: unknown, at: Path): CompiledPath[] | undefined {
  const items = readList(problems, value, at);
  if (items === undefined) return undefined;
  if (items.length === 0) {
    problems.add(at, 'must list at least one path');
    return undefined;
  }
  const compiled = items.map((item, i) => readPath(problems, item, [...at, i]));
  return compiled.every((item) => item !== undefined) ? compiled : undefined;
}
