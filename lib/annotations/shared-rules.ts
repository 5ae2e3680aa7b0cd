import type { BalanceRead } from './balance.ts';
import { isValid, parsePresent, singleRule, type DraftSettings, type FamilyValues, type SettingRule } from './rule.ts';
import type { HeaderAction } from '../routing/settings.ts';
import { parseFreeText, parseHeaderName, parseSecretRef } from './text-values.ts';
import { accept, parseBoolean, parseInteger, refuse, type Parsed } from './values.ts';

/**
 * Rule shapes both families use.
 */

/**
 * A setting spelled by several annotations of one family, all meaning the
 * same (allow-list and its older name whitelist): the first present wins,
 * the others are ignored naming it.
 */
export function listRule<T>(setting: string, names: readonly string[], parse: (value: string) => Parsed<T>, set: (into: DraftSettings, value: T) => void): SettingRule {
  return {
    setting,
    annotations: names,
    read: (values) => {
      const [used, ...others] = names.filter((name) => values(name) !== undefined);
      const ignored = Object.fromEntries(others.map((name) => [name, `${used} sets the same setting and is read instead`]));
      const parsed = parse(values(used!)!);
      return parsed.ok ? { apply: (into) => set(into, parsed.value), ignored } : { invalid: { [used!]: parsed.reason }, ignored };
    },
  };
}

/** A balance algorithm from one annotation; a recognised but unsupported one is ignored, the backend keeping roundrobin. */
export function balanceRule(annotation: string, parse: (value: string) => Parsed<BalanceRead>): SettingRule {
  return {
    setting: 'backend.balance',
    annotations: [annotation],
    read: (values) => balanceOutcome(annotation, parse(values(annotation)!)),
  };
}

export function balanceOutcome(annotation: string, parsed: Parsed<BalanceRead>): ReturnType<SettingRule['read']> {
  if (!parsed.ok) return { invalid: { [annotation]: parsed.reason } };
  const read = parsed.value;
  return 'balance' in read ? { apply: (into) => (into.backend.balance = read.balance) } : { ignored: { [annotation]: read.unsupported } };
}

/**
 * HSTS. Neither controller has it as an Ingress annotation (ingress-nginx
 * has it in its ConfigMap, with these names and defaults: a year, with
 * subdomains, no preload), so both families read the same names.
 * `onByDefault`: ingress-nginx's ConfigMap has `hsts: "true"`, so an Ingress
 * written for it gets HSTS on HTTPS unless `hsts` says "false" (read, and as
 * the family's default on an Ingress with TLS); haproxytech sends none.
 */
export function hstsRule(onByDefault: boolean): SettingRule {
  return {
    setting: 'route.hsts',
    annotations: ['hsts', 'hsts-max-age', 'hsts-include-subdomains', 'hsts-preload'],
    read: (values) => {
      const { values: read, invalid } = parsePresent(values, {
        hsts: parseBoolean,
        'hsts-max-age': (value: string) => parseInteger(value, 0, 1_000_000_000),
        'hsts-include-subdomains': parseBoolean,
        'hsts-preload': parseBoolean,
      });
      if (!isValid(invalid)) return { invalid };
      if ((read.hsts ?? onByDefault) !== true) return { ignored: ignoreAll(values, ['hsts-max-age', 'hsts-include-subdomains', 'hsts-preload'], 'hsts is not "true"') };
      const hsts = {
        maxAge: read['hsts-max-age'] ?? HSTS_DEFAULT.maxAge,
        includeSubdomains: read['hsts-include-subdomains'] ?? HSTS_DEFAULT.includeSubdomains,
        preload: read['hsts-preload'] ?? HSTS_DEFAULT.preload,
      };
      return { apply: (into) => (into.route.hsts = hsts) };
    },
    ...(onByDefault ? { absent: (context) => (context.tls === true ? { apply: (into) => (into.route.hsts = HSTS_DEFAULT) } : {}) } : {}),
  };
}

/** ingress-nginx's ConfigMap defaults: hsts-max-age a year, hsts-include-subdomains true, hsts-preload false. */
export const HSTS_DEFAULT = { maxAge: 31_536_000, includeSubdomains: true, preload: false } as const;

/** The same reason for each of `names` that is present. */
export function ignoreAll(values: FamilyValues, names: readonly string[], reason: string): Record<string, string> {
  return Object.fromEntries(names.filter((name) => values(name) !== undefined).map((name) => [name, reason]));
}

/**
 * Header lines as haproxy.org writes them: one header a line, its name,
 * a space and its value. A value in double quotes is the text between them,
 * as haproxytech hands it to HAProxy (it quotes a value only when it is not
 * quoted already: EnsureQuoted, pkg/annotations/common/main.go), so its
 * documentation's `Cache-Control "no-store,no-cache,private"` sets
 * no-store,no-cache,private. Values are free text (parseFreeText): no "%",
 * so none of haproxytech's log-format expressions.
 */
export function parseHeaderLines(value: string): Parsed<HeaderAction[]> {
  const headers: HeaderAction[] = [];
  for (const line of value.split('\n').map((text) => text.trim())) {
    if (line === '') continue;
    const space = line.search(/\s/);
    const name = parseHeaderName(space === -1 ? line : line.slice(0, space));
    if (!name.ok) return name;
    if (space === -1) return refuse(`header ${name.value} has no value: write "Name value", one header a line`);
    const written = line.slice(space).trim();
    const text = parseFreeText(/^"[^"]*"$/.test(written) ? written.slice(1, -1) : written);
    if (!text.ok) return refuse(`the value of header ${name.value} ${text.reason}`);
    if (headers.some((header) => header.name.toLowerCase() === name.value.toLowerCase())) return refuse(`header ${name.value} is set twice`);
    headers.push({ name: name.value, value: text.value });
  }
  return headers.length === 0 ? refuse('no header: write "Name value", one header a line') : accept(headers);
}

export const requestHeadersRule = singleRule('route.requestHeaders', 'request-set-header', parseHeaderLines, (into, set) => (into.route.requestHeaders = { set }));
export const responseHeadersRule = singleRule('route.responseHeaders', 'response-set-header', parseHeaderLines, (into, set) => (into.route.responseHeaders = { set }));

/**
 * Basic auth: auth-type (each controller spells "basic" its own way),
 * auth-secret and auth-realm, and whatever else a family reads with them.
 * auth-type without a Secret is refused: the route would be served open.
 */
export function basicAuthRule(parseType: (value: string) => Parsed<string>, defaultRealm: string, extra: Readonly<Record<string, (value: string) => Parsed<unknown>>> = {}): SettingRule {
  const details = ['auth-secret', 'auth-realm', ...Object.keys(extra)];
  return {
    setting: 'route.basicAuth',
    annotations: ['auth-type', ...details],
    read: (values, context) => {
      const { values: read, invalid } = parsePresent(values, {
        ...extra,
        'auth-type': parseType,
        'auth-secret': (value: string) => parseSecretRef(value, context.namespace ?? ''),
        'auth-realm': parseFreeText,
      });
      if (!isValid(invalid)) return { invalid };
      if (read['auth-type'] === undefined) return { ignored: ignoreAll(values, details, 'auth-type is not set') };
      const secret = read['auth-secret'];
      if (secret === undefined) return { invalid: { 'auth-type': 'needs auth-secret naming the Secret with the users' } };
      // HAProxy refuses an empty realm ("missing realm value"): an empty auth-realm is the family's default too.
      const realm = read['auth-realm'] || defaultRealm;
      return { apply: (into) => (into.route.basicAuth = { secret, realm }) };
    },
  };
}

/**
 * A feature that cannot be served here and whose object, served without
 * it, would be wrong (a canary taking its main Ingress's routes, a
 * passthrough backend sent plain HTTP): "true" leaves the object out
 * (`refusal`, or `served` when it says the object is served all the same,
 * as the other controller would), "false" is ignored as the default it is.
 */
export function refusedWhenTrue(annotation: string, refusal: string, otherwise: string, served: (values: FamilyValues) => string | undefined = () => undefined): SettingRule {
  return {
    setting: `unsupported.${annotation}`,
    annotations: [annotation],
    read: (values) => {
      const parsed = parseBoolean(values(annotation)!);
      if (!parsed.ok) return { invalid: { [annotation]: parsed.reason } };
      if (!parsed.value) return { ignored: { [annotation]: otherwise } };
      const instead = served(values);
      return instead === undefined ? { leftOut: { [annotation]: refusal } } : { ignored: { [annotation]: instead } };
    },
  };
}

/**
 * ssl-passthrough hands the client's TLS connection to the backend
 * unopened (ingress-nginx does so only when started with
 * --enable-ssl-passthrough, off by default; without it the annotation does
 * nothing and the Ingress is served terminated, re-encrypted when
 * backend-protocol says HTTPS: internal/ingress/controller/nginx.go). Here
 * HAProxy always terminates TLS: a backend the family's `reencrypts` says
 * is spoken to over TLS is served that way, as ingress-nginx's default
 * serves it; any other would be sent plain HTTP where it expects TLS, so
 * its Ingress is left out.
 */
export function sslPassthroughRule(reencrypts: (values: FamilyValues) => boolean, tlsAnnotation: string): SettingRule {
  return refusedWhenTrue(
    'ssl-passthrough',
    `TLS passthrough is not supported: HAProxy terminates TLS, and without ${tlsAnnotation} the backend, which expects the client's TLS, would be sent plain HTTP, so this Ingress is left out`,
    'no passthrough: TLS is terminated by HAProxy',
    (values) =>
      reencrypts(values)
        ? `TLS passthrough is not supported: HAProxy terminates TLS with the Ingress's certificate and re-encrypts to the backend (${tlsAnnotation}), as ingress-nginx does unless started with --enable-ssl-passthrough`
        : undefined,
  );
}
