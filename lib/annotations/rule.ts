import type { BackendSettings, RouteSettings } from '../routing/settings.ts';
import type { Parsed } from './values.ts';

/**
 * How one annotation family is read: a list of rules, one per setting, each
 * reading the family's annotations for that setting together (a redirect
 * and its code, a protocol and its CA), so a rule can say that one
 * annotation only means something with another.
 */

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The settings being built for one object. */
export interface DraftSettings {
  readonly backend: Mutable<BackendSettings>;
  readonly route: Mutable<RouteSettings>;
}

/** What the reader knows about the object beyond its annotations. */
export interface ReadContext {
  /** The object's namespace: a Secret named without one is looked up there. */
  readonly namespace?: string;
  /** Whether the Ingress has a TLS section (spec.tls): both controllers redirect such Ingresses to HTTPS by default. */
  readonly tls?: boolean;
}

/** One family's annotation values on one object, by name within the family ("timeout-server"). */
export type FamilyValues = (name: string) => string | undefined;

/** What a rule made of the annotations it reads. An annotation neither invalid, left out nor ignored is honoured. */
export interface RuleRead {
  /** Writes the setting; absent when the annotations leave HAProxy's default (a redirect turned off). */
  readonly apply?: (into: DraftSettings) => void;
  readonly invalid?: Readonly<Record<string, string>>;
  /**
   * Valid values asking for what cannot be served here, whose object served
   * without it would be wrong or open (a canary, external authentication):
   * the object is left out, as for an invalid value (fail closed).
   */
  readonly leftOut?: Readonly<Record<string, string>>;
  readonly ignored?: Readonly<Record<string, string>>;
}

export interface SettingRule {
  /** The setting, as outcomes name it: "backend.timeouts.server", "route.sslRedirect". */
  readonly setting: string;
  /** The family's annotations this rule reads, by name within the family. */
  readonly annotations: readonly string[];
  readonly read: (values: FamilyValues, context: ReadContext) => RuleRead;
  /**
   * The family's default when none of `annotations` is set but the object
   * carries other annotations of the family, so it was written for that
   * controller (ssl-redirect on a TLS Ingress).
   */
  readonly absent?: (context: ReadContext) => RuleRead;
}

export interface AnnotationFamily {
  /** "haproxy.org/" */
  readonly prefix: string;
  readonly rules: readonly SettingRule[];
  /** Why an annotation of the family that no rule reads is ignored. */
  readonly unsupported: (name: string) => string;
}

/** A rule for one annotation whose parsed value is the setting. */
export function singleRule<T>(setting: string, annotation: string, parse: (value: string, context: ReadContext) => Parsed<T>, set: (into: DraftSettings, value: T) => void): SettingRule {
  return {
    setting,
    annotations: [annotation],
    read: (values, context) => {
      const parsed = parse(values(annotation)!, context);
      return parsed.ok ? { apply: (into) => set(into, parsed.value) } : { invalid: { [annotation]: parsed.reason } };
    },
  };
}

/**
 * Parses the annotations of `parsers` that are present. `invalid` holds the
 * reason of each that failed; `values` the others' results.
 */
export function parsePresent<P extends Record<string, (value: string) => Parsed<unknown>>>(
  values: FamilyValues,
  parsers: P,
): { readonly values: { -readonly [K in keyof P]?: ParsedValue<P[K]> }; readonly invalid: Record<string, string> } {
  const parsed: Record<string, unknown> = {};
  const invalid: Record<string, string> = {};
  for (const [name, parse] of Object.entries(parsers)) {
    const value = values(name);
    if (value === undefined) continue;
    const result = parse(value);
    if (result.ok) parsed[name] = result.value;
    else invalid[name] = result.reason;
  }
  return { values: parsed as { [K in keyof P]?: ParsedValue<P[K]> }, invalid };
}

type ParsedValue<F> = F extends (value: string) => Parsed<infer T> ? T : never;

/** True when nothing failed to parse. */
export const isValid = (invalid: Record<string, string>): boolean => Object.keys(invalid).length === 0;

/** Sets a timeout without dropping the others already set. */
export function setBackendTimeout(into: DraftSettings, which: 'connect' | 'server' | 'tunnel', value: number): void {
  into.backend.timeouts = { ...into.backend.timeouts, [which]: value };
}
