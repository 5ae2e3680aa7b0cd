import type { Problem } from '../pipeline/model.ts';
import { isFields, type Fields } from '../object-fields/fields.ts';
import { isDnsLabel, isDnsSubdomain, quote, type Checked } from '../object-fields/names.ts';
import { GATEWAY_GROUP, type GroupKind } from './api.ts';

/**
 * Reading a Gateway API object's fields without trusting their shape: each
 * reader returns the value when it passed its check and records a Problem
 * naming the field otherwise, so an object's reader can list every fault
 * at once and the object is left out, named, rather than half-read.
 */
export class FieldReader {
  readonly problems: Problem[] = [];
  readonly label: string;

  constructor(label: string) {
    this.label = label;
  }

  problem(field: string, message: string): void {
    this.problems.push({ object: this.label, field, message });
  }

  /** The value when it passed its check; undefined, with the reason as a problem, when not. */
  take<T>(checked: Checked<T>, field: string): T | undefined {
    if (checked.ok) return checked.value;
    this.problem(field, checked.reason);
    return undefined;
  }

  /** An object field; absent is undefined, anything else a problem. */
  fields(value: unknown, field: string): Fields | undefined {
    if (value === undefined || value === null) return undefined;
    if (isFields(value)) return value;
    this.problem(field, 'is not an object');
    return undefined;
  }

  /** An optional list: absent is empty. */
  list(value: unknown, field: string): readonly unknown[] {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    this.problem(field, 'is not a list');
    return [];
  }

  /** A string one of `allowed`, or `fallback` when absent. */
  oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[], fallback: T): T | undefined {
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
    this.problem(field, `${quote(value)} is not one of ${allowed.join(', ')}`);
    return undefined;
  }

  name(value: unknown, field: string, what: string): string | undefined {
    if (isDnsSubdomain(value)) return value;
    this.problem(field, `${quote(value)} is not a ${what} name`);
    return undefined;
  }

  /** A namespace, `fallback` (the object's own) when absent. */
  namespace(value: unknown, field: string, fallback: string): string | undefined {
    if (value === undefined || value === null) return fallback;
    if (isDnsLabel(value)) return value;
    this.problem(field, `${quote(value)} is not a namespace name`);
    return undefined;
  }

  integer(value: unknown, field: string, min: number, max: number): number | undefined {
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    this.problem(field, `${quote(value)} is not a whole number from ${min} to ${max}`);
    return undefined;
  }

  /** A group and kind of a reference, with the defaults the field has when absent. */
  groupKind(reference: Fields, field: string, defaults: GroupKind): GroupKind | undefined {
    const group = reference['group'] ?? defaults.group;
    const kind = reference['kind'] ?? defaults.kind;
    const groupOk = group === '' || isDnsSubdomain(group);
    const kindOk = typeof kind === 'string' && /^[a-zA-Z](?:[-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$/.test(kind);
    if (!groupOk) this.problem(`${field}.group`, `${quote(group)} is not an API group`);
    if (!kindOk) this.problem(`${field}.kind`, `${quote(kind)} is not a kind`);
    return groupOk && kindOk ? { group: group as string, kind: kind as string } : undefined;
  }
}

/** A field left out: JSON gives it as missing or as null. */
export function absent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** The default group of a parentRef or allowedRoutes kind. */
export const GATEWAY_DEFAULTS: GroupKind = { group: GATEWAY_GROUP, kind: 'Gateway' };
