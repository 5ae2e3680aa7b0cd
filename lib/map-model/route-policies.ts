import { createHash } from 'node:crypto';
import type { RedirectCode, RouteSettings, UnresolvedStatus } from '../routing/settings.ts';
import type { ValueSource } from '../pipeline/model.ts';
import { Sourced } from '../pipeline/value-source.ts';
import { externalAuthRule, gatewayAuthRule, type ExternalAuthRule, type GatewayAuthRule } from './auth-rules.ts';
import { inLowestTerms } from '../routing/shares.ts';
import { headerChanges, policyValue, settingLines, SETTING_SLOTS, type HeaderActions, type HeaderSlot, type PolicyLine, type SettingValues } from './policy-slots.ts';
import { backendName } from './service-backend-name.ts';

/**
 * Route policies: the rule sets the shipped frontend renders once per
 * distinct RouteSettings, selected per request by the policy key the path
 * maps carry next to the backend ("<backend>:<policy key>"). The key is a
 * digest of the settings' content, so equal settings share one key whichever
 * Ingress asks for them, and a route whose settings some served route already
 * has changes a map line only: no configuration line, no reload. Routes
 * without settings have no key and no rules.
 *
 * A policy also holds what its rules need precomputed (a redirect's parts,
 * path rewrites as `replace-path` pairs, sources split over ACL lines), so
 * templates stay free of logic.
 *
 * Header changes are no rules of their own
 * (docs/adr/0025-requests-cost-the-same-with-many-policies.md): their
 * values are policies.map lines, `<policy key>/<slot>` → the value, and the
 * frontend has one rule per slot (a header name, what is done to it, and
 * which of the policy's changes of that name it is) whatever the number of
 * policies, so a request pays for the slots of the world, not for its
 * policies, and a policy whose slots are served already is map lines alone.
 */

/** A policy key: "p" and 16 hex digits of the SHA-256 of the settings' canonical JSON. */
export type PolicyKey = string;

/**
 * HAProxy 2.6 splits a configuration line into at most 64 words
 * (MAX_LINE_ARGS); a list of sources is written over several `acl` lines
 * of the same name, which HAProxy ORs.
 */
const SOURCES_PER_LINE = 32;

export interface SourceLine {
  readonly sources: readonly string[];
}

/** One `http-request replace-path <pattern> <replacement>`: a regular expression, and a log-format replacement with \1-style references. */
export interface PathRewrite {
  readonly pattern: string;
  readonly replacement: string;
}

/**
 * One `redirect prefix` line: the scheme written, the port after the host
 * (undefined when it is the scheme's default, which Location leaves out),
 * for every request or only those that came over plain HTTP or TLS.
 */
export interface RedirectLocation {
  readonly scheme: 'http' | 'https';
  readonly port: number | undefined;
  readonly plainOnly: boolean;
  readonly tlsOnly: boolean;
}

/**
 * A redirect answered for every request of the route: to `location`, or to
 * the request's path on another scheme, host or port (`prefix`: a host left
 * undefined stays the request's, without the port of its Host header).
 */
export type RedirectRule =
  | { readonly code: RedirectCode; readonly location: string }
  | { readonly code: RedirectCode; readonly prefix: { readonly host: string | undefined; readonly locations: readonly RedirectLocation[] } };

/** The backend `<namespace>_<service>_<port>` requests are copied to, and which of them. */
export interface MirrorRule {
  readonly backend: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: number;
  readonly share: number;
  readonly of: number;
  readonly partial: boolean;
}

/** HAProxy's longest timeout, in milliseconds (2^31 - 1: a longer one is a "timer overflow" in its configuration). */
const LONGEST_TIMEOUT = 2_147_483_647;

/** The text a rule answers by itself with, by its status (the reason phrases of RFC 9110). */
const UNRESOLVED_ANSWERS: Readonly<Record<UnresolvedStatus, string>> = Object.freeze({
  500: '500 Internal Server Error: no backend of the route can take this request.',
  503: '503 Service Unavailable: no backend of the route can take this request.',
});

/** Percentages to a millionth: `rand(of) lt share`, the fraction reduced. */
const MIRROR_SCALE = 1_000_000;

/** A mirror of no request asks for nothing. */
function mirrorRule(mirror: NonNullable<RouteSettings['mirrors']>[number]): MirrorRule | undefined {
  const { namespace, service, port } = mirror;
  const scaled = Math.min(Math.round(((mirror.percent ?? 100) * MIRROR_SCALE) / 100), MIRROR_SCALE);
  if (scaled <= 0) return undefined;
  const { share, of } = inLowestTerms(scaled, MIRROR_SCALE);
  return Object.freeze({ backend: backendName(namespace, service, port), namespace, service, port, share, of, partial: share < of });
}

export class RoutePolicy extends Sourced {
  readonly key: PolicyKey;
  readonly settings: RouteSettings;
  /** False when all it asks for is header changes and settings of one rule each (policy-slots.ts): then it has no rule of its own, only policies.map lines. */
  readonly ownRules: boolean;
  /** The slots of its header changes: removals, then sets, then additions. */
  readonly headerSlots: readonly HeaderSlot[];
  /** Its policies.map lines: the settings of one rule each, then one per header slot. */
  readonly lines: readonly PolicyLine[];
  readonly settingValues: SettingValues;
  /** `acl` lines of the allowed sources (outside them: 403), or undefined. */
  readonly allow: readonly SourceLine[] | undefined;
  readonly deny: readonly SourceLine[] | undefined;
  /** The Strict-Transport-Security value, or undefined. */
  readonly hsts: string | undefined;
  /** True when a stick table counts per source (rate or connection limit). */
  readonly tracksSources: boolean;
  /** The stick table's expiry and rate period, in milliseconds: the rate limit's period, or 10 s for connections alone. */
  readonly trackingPeriod: number;
  readonly redirect: RedirectRule | undefined;
  /** The `replace-path` pairs that make a redirect's path (Gateway API RequestRedirect `path`), before the redirect. */
  readonly redirectRewrites: readonly PathRewrite[];
  /**
   * How long a backend may take to answer one request (Gateway API
   * `timeouts.backendRequest`), or undefined. 0 asks for no limit, which
   * HAProxy 2.6 cannot set per request (`set-timeout server 0` leaves the
   * backend's own, src/stream.c back_establish), so it is the longest time
   * HAProxy takes, as the specification says of a timeout that cannot be
   * disabled. Without backendRequest, `timeouts.request` (the deadline to
   * respond, which the specification lets start once the request is
   * received) is it: HAProxy has no deadline for a whole exchange, and its
   * wait for the server's answer is the closest it has.
   */
  readonly serverTimeout: { readonly milliseconds: number } | undefined;
  /** Requests answered `status` with the text `answer` (backendRefs that do not resolve): `share` of `of` at random when `partial`, else all. */
  readonly unresolved: { readonly share: number; readonly of: number; readonly status: UnresolvedStatus; readonly answer: string; readonly partial: boolean } | undefined;
  /** Requests copied to the backends of Service ports (Gateway API RequestMirror): each all, or `share` in `of` at random when `partial`. */
  readonly mirrors: readonly MirrorRule[];
  readonly rewrites: readonly PathRewrite[];
  readonly requestHeaders: HeaderActions | undefined;
  readonly responseHeaders: HeaderActions | undefined;
  /** The userlist of basic auth: `auth_<namespace>_<secret>`. */
  readonly userlist: string | undefined;
  /** Client certificate authentication (settings.clientCertificate), as the template's rules ask for it. */
  readonly clientCertificate:
    | {
        /** Refused without a certificate (verify "on"). */
        readonly required: boolean;
        /** Refused with a certificate that fails verification ("on" and "optional"). */
        readonly verified: boolean;
        readonly errorPage: string | undefined;
        readonly passCertificate: boolean;
        /** Plain HTTP requests are not refused for want of a certificate. */
        readonly overTlsOnly: boolean;
      }
    | undefined;
  /** The arguments of the external-auth action (lib/lua/external-auth.ts), "-" for one not set. */
  readonly externalAuth: ExternalAuthRule | undefined;
  /** The arguments of the gateway-auth action (Gateway API ExternalAuth, lib/lua/external-auth.ts), "-" for a list not set. */
  readonly gatewayExternalAuth: GatewayAuthRule | undefined;
  readonly cors:
    | {
        /** Any origin, answered `*`. */
        readonly anyOrigin: boolean;
        /** Any origin, answered with itself (`*` with echoWildcards). */
        readonly echoAnyOrigin: boolean;
        /** Origins matched exactly. */
        readonly origins: readonly string[];
        /** Regular expressions for origins with a "*." subdomain wildcard (one label, as ingress-nginx reads it), and allowOriginPatterns. */
        readonly originPatterns: readonly string[];
        /** Empty when none are sent, or when the request's are (`echoMethods`). */
        readonly methods: string;
        /** The preflight's Access-Control-Request-Method sent back (`*` with echoWildcards). */
        readonly echoMethods: boolean;
        readonly headers: string;
        /** The preflight's Access-Control-Request-Headers sent back (`*` with echoWildcards). */
        readonly echoHeaders: boolean;
        /** Empty when none are sent, or when the response's header names are (`exposeResponseNames`). */
        readonly exposeHeaders: string;
        readonly exposeResponseNames: boolean;
        readonly credentials: boolean;
        readonly maxAge: number | undefined;
        readonly respondToPreflight: boolean;
      }
    | undefined;

  constructor(key: PolicyKey, settings: RouteSettings, path: string | undefined, source: ValueSource) {
    super(source);
    this.key = key;
    this.settings = settings;
    this.allow = settings.allow && sourceLines(settings.allow);
    this.deny = settings.deny && sourceLines(settings.deny);
    const hsts = settings.hsts;
    this.hsts = hsts && `max-age=${hsts.maxAge}${hsts.includeSubdomains ? '; includeSubDomains' : ''}${hsts.preload ? '; preload' : ''}`;
    this.tracksSources = settings.rateLimit !== undefined || settings.connectionLimit !== undefined;
    this.trackingPeriod = settings.rateLimit?.period ?? 10_000;
    this.redirect = redirectRule(settings.redirect);
    this.redirectRewrites = pathRewrites(settings.redirect?.path, path);
    const backendRequest = settings.timeouts?.backendRequest ?? (settings.timeouts?.request || undefined);
    this.serverTimeout = backendRequest === undefined ? undefined : Object.freeze({ milliseconds: backendRequest === 0 ? LONGEST_TIMEOUT : backendRequest });
    const unresolved = settings.unresolvedShare;
    this.unresolved = unresolved && { ...unresolved, answer: UNRESOLVED_ANSWERS[unresolved.status], partial: unresolved.share < unresolved.of };
    this.mirrors = Object.freeze((settings.mirrors ?? []).flatMap((mirror) => mirrorRule(mirror) ?? []));
    this.rewrites = pathRewrites(settings.rewrite, path);
    this.requestHeaders = headerActions(settings.requestHeaders);
    this.responseHeaders = headerActions(settings.responseHeaders);
    const auth = settings.basicAuth;
    this.userlist = auth && userlistName(auth.secret.namespace, auth.secret.name);
    const client = settings.clientCertificate;
    this.clientCertificate = client && {
      required: client.verify === 'on',
      verified: client.verify !== 'optional_no_ca',
      errorPage: client.errorPage,
      passCertificate: client.passCertificate,
      overTlsOnly: client.overTlsOnly === true,
    };
    this.externalAuth = externalAuthRule(settings.externalAuth);
    this.gatewayExternalAuth = gatewayAuthRule(settings.gatewayExternalAuth);
    const cors = settings.cors;
    this.cors = cors && corsRule(cors);
    this.ownRules = Object.entries(settings).some(([name, value]) => value !== undefined && !SETTING_SLOTS.has(name));
    const changes = [...headerChanges(false, this.requestHeaders), ...headerChanges(true, this.responseHeaders)];
    this.headerSlots = Object.freeze(changes.map(([slot]) => slot));
    const values: SettingValues = {
      servedOver: settings.servedOver,
      sslRedirect: settings.sslRedirect,
      serverTimeout: this.serverTimeout,
      upstreamHost: settings.upstreamHost,
      withoutForwardedFor: settings.withoutForwardedFor === true,
      forwardedPrefix: settings.forwardedPrefix,
      hsts: this.hsts,
    };
    this.settingValues = Object.freeze(values);
    const lines = [...settingLines(values), ...changes.map(([slot, value]): [string, string] => [slot.slot, policyValue(value)])];
    this.lines = Object.freeze(lines.map(([slot, value]) => Object.freeze({ key: `${key}/${slot}`, value })));
    Object.freeze(this);
  }
}

type Cors = NonNullable<RouteSettings['cors']>;

/** The CORS rule of a policy; a wildcard is echoed only where HAProxy answers (the preflight, and the response's own header names). */
function corsRule(cors: Cors): NonNullable<RoutePolicy['cors']> {
  const anyOrigin = cors.allowOrigins.includes('*');
  const echo = (list: readonly string[]) => cors.echoWildcards === true && list.includes('*');
  const echoMethods = echo(cors.allowMethods) && cors.respondToPreflight;
  const echoHeaders = echo(cors.allowHeaders) && cors.respondToPreflight;
  const exposeResponseNames = echo(cors.exposeHeaders ?? []);
  return {
    anyOrigin: anyOrigin && cors.echoWildcards !== true,
    echoAnyOrigin: anyOrigin && cors.echoWildcards === true,
    origins: cors.allowOrigins.filter((origin) => origin !== '*' && !origin.includes('*')),
    originPatterns: [...cors.allowOrigins.filter((origin) => origin !== '*' && origin.includes('*')).map(originPattern), ...(cors.allowOriginPatterns ?? [])],
    methods: echoMethods ? '' : cors.allowMethods.join(', '),
    echoMethods,
    headers: echoHeaders ? '' : cors.allowHeaders.join(', '),
    echoHeaders,
    exposeHeaders: exposeResponseNames ? '' : (cors.exposeHeaders ?? []).join(', '),
    exposeResponseNames,
    credentials: cors.allowCredentials,
    maxAge: cors.maxAge,
    respondToPreflight: cors.respondToPreflight,
  };
}

/** `https://*.example.com` as the regular expression `^https://[A-Za-z0-9-]+\.example\.com$`. */
function originPattern(origin: string): string {
  const [before, after] = origin.split('*.', 2) as [string, string];
  return `^${escapeRegex(before)}[A-Za-z0-9-]+\\.${escapeRegex(after)}$`;
}

/** The userlist a basic-auth Secret's users are written to. */
export function userlistName(namespace: string, name: string): string {
  return `auth_${namespace}_${name}`;
}

function sourceLines(sources: readonly string[]): readonly SourceLine[] {
  const lines: SourceLine[] = [];
  for (let i = 0; i < sources.length; i += SOURCES_PER_LINE) lines.push(Object.freeze({ sources: Object.freeze(sources.slice(i, i + SOURCES_PER_LINE)) }));
  return Object.freeze(lines);
}

function headerActions(headers: RouteSettings['requestHeaders']): HeaderActions | undefined {
  if (!headers) return undefined;
  return Object.freeze({
    set: Object.freeze(headers.set ?? []),
    add: Object.freeze(headers.add ?? []),
    remove: Object.freeze((headers.remove ?? []).map((name) => Object.freeze({ name }))),
  });
}

const DEFAULT_PORTS = { http: 80, https: 443 } as const;

function redirectLocation(scheme: 'http' | 'https', port: number | undefined, plainOnly: boolean, tlsOnly: boolean): RedirectLocation {
  return Object.freeze({ scheme, port: port === DEFAULT_PORTS[scheme] ? undefined : port, plainOnly, tlsOnly });
}

/**
 * The Gateway API's RequestRedirect (apis/v1/httproute_types.go
 * HTTPRequestRedirectFilter.Port): without a port, a scheme's well-known
 * port when a scheme is set, else the listener's, taken to be its scheme's
 * default (a policy is shared by routes on every listener); never the port
 * of the request's Host header. A port that is its scheme's default is left
 * out of Location. Without a scheme the request's stays, and so does which
 * port is its default: one line per scheme.
 */
function redirectRule(redirect: RouteSettings['redirect']): RedirectRule | undefined {
  if (!redirect) return undefined;
  const { code, scheme, port } = redirect;
  if (redirect.location !== undefined) return { code, location: redirect.location };
  const locations = scheme ? [redirectLocation(scheme, port, false, false)] : [redirectLocation('http', port, true, false), redirectLocation('https', port, false, true)];
  return { code, prefix: Object.freeze({ host: redirect.host, locations: Object.freeze(locations) }) };
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** `text` as a regular expression matching exactly it. */
export function escapeRegex(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

/**
 * The `replace-path` pairs of a rewrite; HAProxy replaces the whole path
 * with the replacement when the pattern matches, as nginx's rewrite does.
 * `prefix` replaces the matched path prefix element-wise (as a Gateway API
 * ReplacePrefixMatch): "/app" by "/new" turns "/app/x" into "/new/x", by
 * "/" into "/x". `route-path` reads the route's path as nginx reads a
 * location with use-regex: case-insensitive, from the path's start.
 */
function pathRewrites(rewrite: RouteSettings['rewrite'] | NonNullable<RouteSettings['redirect']>['path'], path: string | undefined): readonly PathRewrite[] {
  if (!rewrite) return Object.freeze([]);
  switch (rewrite.kind) {
    case 'full':
      return Object.freeze([{ pattern: '^.*$', replacement: rewrite.path }]);
    case 'regex':
      return Object.freeze(rewrite.rules.map(({ pattern, replacement }) => ({ pattern, replacement })));
    case 'route-path':
      return Object.freeze([{ pattern: `(?i)^${path ?? '/'}`, replacement: rewrite.replacement }]);
    case 'prefix': {
      const trimmed = (path ?? '/').replace(/\/+$/, '');
      const matched = escapeRegex(trimmed);
      const replacement = rewrite.replacement.replace(/\/+$/, '');
      if (replacement === '')
        return Object.freeze([
          { pattern: `^${matched}$`, replacement: '/' },
          { pattern: `^${matched}(/.*)$`, replacement: '\\1' },
        ]);
      return Object.freeze([{ pattern: `^${matched}(/.*)?$`, replacement: `${replacement}\\1` }]);
    }
  }
}

/** Keys in code-unit order at every level: one text for one content, whatever order the fields were set in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** True when a route's rewrite depends on the route's own path, which then belongs to its policy's content. */
export function rewritesOwnPath(settings: RouteSettings): boolean {
  const kind = settings.rewrite?.kind;
  return kind === 'prefix' || kind === 'route-path' || settings.redirect?.path?.kind === 'prefix';
}

/**
 * The policy of routes with these settings, or undefined when they ask for
 * nothing. `path` is the route's path; it is part of the content only when
 * the rewrite depends on it.
 */
export function routePolicy(settings: RouteSettings, path: string, source: ValueSource): RoutePolicy | undefined {
  const content = canonicalJson(settings);
  if (content === '{}') return undefined;
  const own = rewritesOwnPath(settings) ? path : undefined;
  const digest = createHash('sha256')
    .update(own === undefined ? content : `${content}\u0000${own}`)
    .digest('hex');
  return new RoutePolicy(`p${digest.slice(0, 16)}`, settings, own, source);
}
