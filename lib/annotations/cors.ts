import { isValid, parsePresent, type SettingRule } from './rule.ts';
import type { RouteSettings } from '../routing/settings.ts';
import { ignoreAll } from './shared-rules.ts';
import { parseHeaderName, parseRegex } from './text-values.ts';
import { accept, parseBoolean, parseList, refuse, type Parsed } from './values.ts';

/**
 * CORS, read the same way for both families except for the switch's name,
 * the max-age's format and the defaults, which are each controller's own.
 */

export type Cors = NonNullable<RouteSettings['cors']>;

const ORIGIN = /^(?:[a-z][a-z0-9+.-]*:\/\/(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?|null)$/;

/** "*" or a comma-separated list of origins (scheme://host[:port], a leading "*." for any subdomain, or null). */
export function parseOrigins(value: string): Parsed<string[]> {
  if (value.trim() === '*') return accept(['*']);
  return parseList(value, (origin) =>
    ORIGIN.test(origin)
      ? accept(origin)
      : refuse(`not an origin: ${JSON.stringify(origin)} (use "*" or origins like https://example.com, separated by commas; regular expressions are not supported)`),
  );
}

/** Origins as parseOrigins reads them, or else one regular expression an origin matches. */
function parseOriginsOrRegex(value: string): Parsed<string[] | { readonly pattern: string }> {
  const origins = parseOrigins(value);
  if (origins.ok) return origins;
  const pattern = parseRegex(value.trim());
  return pattern.ok ? accept({ pattern: pattern.value }) : refuse(`${origins.reason.replace('; regular expressions are not supported', '')}, or a regular expression: ${pattern.reason}`);
}

/** "*" or a comma-separated list of methods. */
export function parseMethods(value: string): Parsed<string[]> {
  if (value.trim() === '*') return accept(['*']);
  return parseList(value, (method) => (/^[A-Za-z]{1,32}$/.test(method) ? accept(method.toUpperCase()) : refuse(`not a method: ${JSON.stringify(method)}`)));
}

/** "*" or a comma-separated list of header names. */
export function parseHeaderNames(value: string): Parsed<string[]> {
  if (value.trim() === '*') return accept(['*']);
  return parseList(value, parseHeaderName);
}

export interface CorsDialect {
  readonly enable: string;
  /**
   * cors-allow-origin may be a regular expression, as haproxytech reads
   * every value but "*" (`-m reg`, pkg/annotations/ingress/resSetCORS.go):
   * a value that is not a list of origins is taken as one.
   */
  readonly originRegex?: boolean;
  /** The annotation that has HAProxy answer preflights itself, when the family has one (else `defaults.respondToPreflight` holds). */
  readonly respondToPreflight?: string;
  readonly maxAge: (value: string) => Parsed<number>;
  readonly defaults: Omit<Cors, 'maxAge'> & { readonly maxAge: number };
}

const PARTS = ['cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-allow-credentials', 'cors-max-age'];

export function corsRule(dialect: CorsDialect): SettingRule {
  const respond = dialect.respondToPreflight;
  const parts = respond === undefined ? PARTS : [...PARTS, respond];
  return {
    setting: 'route.cors',
    annotations: [dialect.enable, ...parts],
    read: (values) => {
      const { values: read, invalid } = parsePresent(values, {
        [dialect.enable]: parseBoolean,
        'cors-allow-origin': dialect.originRegex === true ? parseOriginsOrRegex : parseOrigins,
        'cors-allow-methods': parseMethods,
        'cors-allow-headers': parseHeaderNames,
        'cors-allow-credentials': parseBoolean,
        'cors-max-age': dialect.maxAge,
        ...(respond === undefined ? {} : { [respond]: parseBoolean }),
      } as const);
      if (!isValid(invalid)) return { invalid };
      if (read[dialect.enable] !== true) return { ignored: ignoreAll(values, parts, `${dialect.enable} is not "true"`) };
      const { defaults } = dialect;
      const origin = read['cors-allow-origin'] as string[] | { readonly pattern: string } | undefined;
      const cors: Cors = {
        allowOrigins: origin === undefined ? defaults.allowOrigins : 'pattern' in origin ? [] : origin,
        ...(origin !== undefined && 'pattern' in origin ? { allowOriginPatterns: [origin.pattern] } : {}),
        allowMethods: (read['cors-allow-methods'] as string[] | undefined) ?? defaults.allowMethods,
        allowHeaders: (read['cors-allow-headers'] as string[] | undefined) ?? defaults.allowHeaders,
        allowCredentials: (read['cors-allow-credentials'] as boolean | undefined) ?? defaults.allowCredentials,
        maxAge: (read['cors-max-age'] as number | undefined) ?? defaults.maxAge,
        respondToPreflight: (respond === undefined ? undefined : (read[respond] as boolean | undefined)) ?? defaults.respondToPreflight,
      };
      return { apply: (into) => (into.route.cors = cors) };
    },
  };
}
