import { parseCidrList } from './addresses.ts';
import { parseNginxBalance, parseUpstreamHashBy } from './balance.ts';
import { corsRule } from './cors.ts';
import { NGINX_ANNOTATIONS, REMOVED_NGINX_ANNOTATIONS } from './nginx-names.ts';
import { nginxClientCertificate } from './client-certificates.ts';
import { nginxExternalAuthLeftOut, nginxExternalAuthRule } from './external-auth.ts';
import { nginxAccessSnippets, nginxClientCertificates } from './fail-closed.ts';
import { balanceOutcome, basicAuthRule, hstsRule, ignoreAll, listRule, refusedWhenTrue, requestHeadersRule, responseHeadersRule, sslPassthroughRule } from './shared-rules.ts';
import { isValid, parsePresent, setBackendTimeout, singleRule, type AnnotationFamily, type RuleRead, type SettingRule } from './rule.ts';
import type { BackendSettings, RedirectCode, RouteSettings } from '../routing/settings.ts';
import { parseCookieName, parseHost, parsePath, parseSecretRef, parseUrl } from './text-values.ts';
import { accept, parseBoolean, parseInteger, parseRedirectCode, parseSeconds, parseSize, refuse, type Parsed } from './values.ts';

/**
 * nginx.ingress.kubernetes.io/* annotations (ingress-nginx), read with
 * ingress-nginx's meaning (docs/user-guide/nginx-configuration/annotations.md
 * and internal/ingress/annotations/ of that project). Differences from
 * haproxy.org/ are in docs/annotations.md.
 */

/** ingress-nginx's redirect to HTTPS: 308 (its http-redirect-code default). */
const SSL_REDIRECT_CODE = 308;

const redirectToHttps: RuleRead = { apply: (into) => (into.route.sslRedirect = { code: SSL_REDIRECT_CODE }) };

const sslRedirect: SettingRule = {
  setting: 'route.sslRedirect',
  annotations: ['force-ssl-redirect', 'ssl-redirect'],
  read: (values, context) => {
    const { values: read, invalid } = parsePresent(values, { 'force-ssl-redirect': parseBoolean, 'ssl-redirect': parseBoolean });
    if (!isValid(invalid)) return { invalid };
    if (read['force-ssl-redirect'] === true) return redirectToHttps;
    // ssl-redirect is on by default and only acts on an Ingress with TLS.
    if (context.tls === true) return read['ssl-redirect'] === false ? {} : redirectToHttps;
    return read['ssl-redirect'] === true
      ? { ignored: { 'ssl-redirect': 'the Ingress has no TLS section, and ingress-nginx redirects only those: use force-ssl-redirect to redirect without' } }
      : {};
  },
  absent: (context) => (context.tls === true ? redirectToHttps : {}),
};

type Protocol = NonNullable<BackendSettings['protocol']>;

const PROTOCOLS: Readonly<Record<string, Pick<Protocol, 'version' | 'tls'>>> = {
  http: { version: 'h1', tls: false },
  https: { version: 'h1', tls: true },
  grpc: { version: 'h2c', tls: false },
  grpcs: { version: 'h2', tls: true },
};

function parseBackendProtocol(value: string): Parsed<Pick<Protocol, 'version' | 'tls'>> {
  const protocol = PROTOCOLS[value.toLowerCase()];
  if (protocol !== undefined) return accept(protocol);
  if (/^(auto_http|fcgi)$/i.test(value)) return refuse(`${value} backends are not supported: use HTTP, HTTPS, GRPC or GRPCS`);
  return refuse('not a backend protocol: use HTTP, HTTPS, GRPC or GRPCS');
}

function parseOnOff(value: string): Parsed<boolean> {
  return value === 'on' || value === 'off' ? accept(value === 'on') : refuse('use "on" or "off"');
}

const TLS_ONLY = ['proxy-ssl-secret', 'proxy-ssl-verify', 'proxy-ssl-name', 'proxy-ssl-server-name'];

const protocol: SettingRule = {
  setting: 'backend.protocol',
  annotations: ['backend-protocol', ...TLS_ONLY],
  read: (values, context) => {
    const { values: read, invalid } = parsePresent(values, {
      'backend-protocol': parseBackendProtocol,
      'proxy-ssl-secret': (value: string) => parseSecretRef(value, context.namespace ?? ''),
      'proxy-ssl-verify': parseOnOff,
      'proxy-ssl-name': parseHost,
      'proxy-ssl-server-name': parseOnOff,
    });
    if (!isValid(invalid)) return { invalid };
    const base = read['backend-protocol'] ?? PROTOCOLS['http']!;
    const present = TLS_ONLY.filter((name) => values(name) !== undefined);
    if (!base.tls) return { apply: (into) => (into.backend.protocol = base), ignored: Object.fromEntries(present.map((name) => [name, 'the backend protocol is not HTTPS or GRPCS'])) };
    const ignored: Record<string, string> = {};
    const secret = read['proxy-ssl-secret'];
    if (read['proxy-ssl-verify'] === true && secret === undefined) return { invalid: { 'proxy-ssl-verify': '"on" needs proxy-ssl-secret naming a Secret with the CA (ca.crt)' } };
    if (read['proxy-ssl-verify'] !== true && secret !== undefined)
      ignored['proxy-ssl-secret'] = 'proxy-ssl-verify is not "on", so its CA is not used (client certificates towards backends are not supported)';
    const sni = read['proxy-ssl-server-name'] === true ? read['proxy-ssl-name'] : undefined;
    if (read['proxy-ssl-name'] !== undefined && sni === undefined) ignored['proxy-ssl-name'] = 'proxy-ssl-server-name is not "on", so no SNI is sent';
    if (read['proxy-ssl-server-name'] === true && sni === undefined) ignored['proxy-ssl-server-name'] = 'no proxy-ssl-name to send as SNI';
    const verifyCa = read['proxy-ssl-verify'] === true ? secret : undefined;
    return {
      apply: (into) => (into.backend.protocol = { ...base, ...(verifyCa === undefined ? {} : { verifyCa }), ...(sni === undefined ? {} : { sni }) }),
      ignored,
    };
  },
};

/** proxy_read_timeout and proxy_send_timeout are both HAProxy's server timeout (inactivity towards the server): the longer one is kept. */
const serverTimeout: SettingRule = {
  setting: 'backend.timeouts.server',
  annotations: ['proxy-read-timeout', 'proxy-send-timeout'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, { 'proxy-read-timeout': parseSeconds, 'proxy-send-timeout': parseSeconds });
    if (!isValid(invalid)) return { invalid };
    const longest = Math.max(read['proxy-read-timeout'] ?? 0, read['proxy-send-timeout'] ?? 0);
    return { apply: (into) => setBackendTimeout(into, 'server', longest) };
  },
};

/** upstream-hash-by takes precedence over load-balance, as in ingress-nginx. */
const balance: SettingRule = {
  setting: 'backend.balance',
  annotations: ['upstream-hash-by', 'load-balance'],
  read: (values) => {
    if (values('upstream-hash-by') === undefined) return balanceOutcome('load-balance', parseNginxBalance(values('load-balance')!));
    const read = balanceOutcome('upstream-hash-by', parseUpstreamHashBy(values('upstream-hash-by')!));
    return values('load-balance') === undefined ? read : { ...read, ignored: { ...read.ignored, 'load-balance': 'upstream-hash-by takes precedence' } };
  },
};

/** A cookie's lifetime in whole seconds (ingress-nginx's session-cookie-max-age and -expires). */
const parseCookieSeconds = (value: string): Parsed<number> => parseInteger(value, 1, 2_147_483_647);

/**
 * Cookie affinity. ingress-nginx writes session-cookie-max-age as the
 * cookie's Max-Age and session-cookie-expires as an Expires that many
 * seconds ahead (rootfs/etc/nginx/lua/balancer/sticky.lua). HAProxy's
 * cookie attributes are fixed text, so both are written as Max-Age, which
 * browsers read before Expires: max-age when both are set.
 */
const affinity: SettingRule = {
  setting: 'backend.affinity',
  annotations: ['affinity', 'session-cookie-name', 'session-cookie-max-age', 'session-cookie-expires'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, {
      affinity: (value: string) => (value === 'cookie' ? accept(value) : refuse('not an affinity type: use "cookie"')),
      'session-cookie-name': parseCookieName,
      'session-cookie-max-age': parseCookieSeconds,
      'session-cookie-expires': parseCookieSeconds,
    });
    if (!isValid(invalid)) return { invalid };
    if (read.affinity === undefined) return { ignored: ignoreAll(values, ['session-cookie-name', 'session-cookie-max-age', 'session-cookie-expires'], 'affinity is not "cookie"') };
    const cookie = read['session-cookie-name'] ?? 'INGRESSCOOKIE';
    const maxAge = read['session-cookie-max-age'] ?? read['session-cookie-expires'];
    return { apply: (into) => (into.backend.affinity = maxAge === undefined ? { cookie } : { cookie, maxAge }) };
  },
};

/**
 * ingress-nginx sends its auth-realm as is, an empty realm when there is
 * none (internal/ingress/annotations/auth/main.go reads it with no
 * default); HAProxy cannot send an empty one, so the realm of
 * ingress-nginx's own basic-auth example stands in for it.
 */
const NGINX_DEFAULT_REALM = 'Authentication Required';

/**
 * Basic auth only: digest is refused, since serving the route without it
 * would open it. The Secret's format (auth-secret-type) is told apart by
 * its keys when the users are read (lib/annotations/auth-users.ts).
 */
const basicAuth = basicAuthRule(
  (value) => (value === 'basic' ? accept(value) : refuse(value === 'digest' ? 'digest authentication is not supported: use "basic"' : 'not an authentication type: use "basic"')),
  NGINX_DEFAULT_REALM,
  { 'auth-secret-type': (value) => (value === 'auth-file' || value === 'auth-map' ? accept(value) : refuse('not a Secret type: use "auth-file" or "auth-map"')) },
);

/** ingress-nginx's limit-burst-multiplier default (internal/ingress/annotations/ratelimit/main.go). */
const BURST_MULTIPLIER = 5;

/**
 * limit-rps (per second) or limit-rpm (per minute), answered 503 as
 * ingress-nginx's limit-req-status-code default. ingress-nginx lets a
 * burst of rate x limit-burst-multiplier through at once (`limit_req ...
 * burst=B nodelay`: B + 1 requests from a source at rest) and then the
 * rate. HAProxy counts requests over a sliding period, so the period is
 * the time the rate takes to make B + 1 requests, and B + 1 are allowed
 * in it: the same burst, the same rate sustained.
 */
const rateLimit: SettingRule = {
  setting: 'route.rateLimit',
  annotations: ['limit-rps', 'limit-rpm', 'limit-burst-multiplier'],
  read: (values): RuleRead => {
    const { values: read, invalid } = parsePresent(values, {
      'limit-rps': (value: string) => parseInteger(value, 1, 1_000_000_000),
      'limit-rpm': (value: string) => parseInteger(value, 1, 1_000_000_000),
      'limit-burst-multiplier': (value: string) => parseInteger(value, 1, 1000),
    });
    if (!isValid(invalid)) return { invalid };
    const rps = read['limit-rps'];
    const [rate, period] = rps === undefined ? [read['limit-rpm'], 60_000] : [rps, 1000];
    if (rate === undefined) return { ignored: { 'limit-burst-multiplier': 'limit-rps or limit-rpm is not set' } };
    const requests = rate * (read['limit-burst-multiplier'] ?? BURST_MULTIPLIER) + 1;
    const limit = { requests, period: Math.ceil((requests * period) / rate), status: 503 };
    return {
      apply: (into) => (into.route.rateLimit = limit),
      ...(rps !== undefined && read['limit-rpm'] !== undefined ? { ignored: { 'limit-rpm': 'limit-rps is read instead: one rate per route' } } : {}),
    };
  },
};

const CAPTURE = /\$(\d)/g;

/**
 * rewrite-target: the whole path replaced (nginx's rewrite replaces the
 * whole URI); with captures ($1..$9) of the route's path, which makes that
 * path a regular expression as in ingress-nginx.
 */
function parseRewriteTarget(value: string): Parsed<NonNullable<RouteSettings['rewrite']>> {
  const withoutCaptures = value.replace(CAPTURE, '');
  const path = parsePath(withoutCaptures === '' ? '/' : withoutCaptures.startsWith('/') ? withoutCaptures : `/${withoutCaptures}`);
  if (!path.ok) return refuse(path.reason.replace('not a path', 'not a rewrite target'));
  if (withoutCaptures === value) return value.startsWith('/') ? accept({ kind: 'full', path: value }) : refuse('not a rewrite target: it must start with "/"');
  return accept({ kind: 'route-path', replacement: value.replace(CAPTURE, '\\$1') });
}

const rewrite = singleRule('route.rewrite', 'rewrite-target', parseRewriteTarget, (into, target) => {
  into.route.rewrite = target;
  if (target.kind === 'route-path') into.route.regexPath = true;
});

type RedirectTarget = { readonly location: string } | { readonly scheme: 'http' | 'https'; readonly host: string; readonly port?: number };

const KEEP_URI = /^(https?):\/\/([^/?#]+)\$request_uri$/;

/**
 * A URL, or the common `scheme://host$request_uri` (the request's path and
 * query kept, only scheme and host replaced), read as that. Other nginx
 * variables are refused with the URL check's reason ("$").
 */
function parseRedirectTarget(value: string): Parsed<RedirectTarget> {
  const keep = KEEP_URI.exec(value);
  if (keep === null) {
    const url = parseUrl(value);
    return url.ok ? accept({ location: url.value }) : url;
  }
  const host = parseHost(keep[2]!);
  if (!host.ok) return host;
  const [name, port] = host.value.split(':');
  return accept({ scheme: keep[1] as 'http' | 'https', host: name!, ...(port === undefined ? {} : { port: Number(port) }) });
}

/** temporal-redirect before permanent-redirect, as ingress-nginx reads them. */
const redirect: SettingRule = {
  setting: 'route.redirect',
  annotations: ['temporal-redirect', 'temporal-redirect-code', 'permanent-redirect', 'permanent-redirect-code'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, {
      'temporal-redirect': parseRedirectTarget,
      'temporal-redirect-code': parseRedirectCode,
      'permanent-redirect': parseRedirectTarget,
      'permanent-redirect-code': parseRedirectCode,
    });
    if (!isValid(invalid)) return { invalid };
    const [kind, defaultCode] = read['temporal-redirect'] !== undefined ? (['temporal', 302] as const) : (['permanent', 301] as const);
    const other = kind === 'temporal' ? 'permanent' : 'temporal';
    const target = read[`${kind}-redirect`];
    if (target === undefined) return { ignored: ignoreAll(values, ['temporal-redirect-code', 'permanent-redirect-code'], 'no temporal-redirect or permanent-redirect is set') };
    const code: RedirectCode = read[`${kind}-redirect-code`] ?? defaultCode;
    return {
      apply: (into) => (into.route.redirect = { code, ...target }),
      ignored: ignoreAll(values, [`${other}-redirect`, `${other}-redirect-code`], `${kind}-redirect is read instead`),
    };
  },
};

/** ingress-nginx's proxy-body-size: "0" lifts the limit, which is HAProxy's default. */
const bodySize = singleRule('route.bodySizeLimit', 'proxy-body-size', parseSize, (into, bytes) => {
  if (bytes > 0) into.route.bodySizeLimit = bytes;
});

/** A canary is served by ingress-nginx beside its main Ingress; served alone here it would take the main Ingress's routes. */
const canary = refusedWhenTrue(
  'canary',
  'canary Ingresses are not supported: this Ingress is left out so that its main Ingress keeps its routes',
  'not a canary: the Ingress is served as an ordinary one',
);

export const nginxFamily: AnnotationFamily = {
  prefix: 'nginx.ingress.kubernetes.io/',
  rules: [
    sslRedirect,
    protocol,
    serverTimeout,
    singleRule('backend.timeouts.connect', 'proxy-connect-timeout', parseSeconds, (into, value) => setBackendTimeout(into, 'connect', value)),
    balance,
    listRule('route.allow', ['allowlist-source-range', 'whitelist-source-range'], parseCidrList, (into, value) => (into.route.allow = value)),
    listRule('route.deny', ['denylist-source-range'], parseCidrList, (into, value) => (into.route.deny = value)),
    hstsRule(true),
    affinity,
    basicAuth,
    rateLimit,
    singleRule(
      'route.connectionLimit',
      'limit-connections',
      (value) => parseInteger(value, 1, 1_000_000_000),
      (into, limit) => (into.route.connectionLimit = limit),
    ),
    bodySize,
    rewrite,
    singleRule('route.regexPath', 'use-regex', parseBoolean, (into, regex) => {
      if (regex) into.route.regexPath = true;
    }),
    singleRule('route.appRoot', 'app-root', parsePath, (into, path) => (into.route.appRoot = path)),
    redirect,
    singleRule('route.upstreamHost', 'upstream-vhost', parseHost, (into, host) => (into.route.upstreamHost = host)),
    singleRule('route.forwardedPrefix', 'x-forwarded-prefix', parsePath, (into, prefix) => (into.route.forwardedPrefix = prefix)),
    requestHeadersRule,
    responseHeadersRule,
    corsRule({
      enable: 'enable-cors',
      maxAge: (value) => parseInteger(value, 0, 1_000_000_000),
      defaults: {
        allowOrigins: ['*'],
        allowMethods: ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'],
        allowHeaders: ['DNT', 'Keep-Alive', 'User-Agent', 'X-Requested-With', 'If-Modified-Since', 'Cache-Control', 'Content-Type', 'Range', 'Authorization'],
        allowCredentials: true,
        maxAge: 1_728_000,
        respondToPreflight: true,
      },
    }),
    canary,
    sslPassthroughRule((values) => /^(https|grpcs)$/i.test(values('backend-protocol') ?? ''), 'backend-protocol: HTTPS'),
    nginxExternalAuthRule,
    nginxExternalAuthLeftOut,
    nginxClientCertificate,
    nginxClientCertificates,
    nginxAccessSnippets,
  ],
  unsupported: (name) => UNSUPPORTED[name] ?? (name.startsWith('canary') ? CANARY : notSupported(name)),
};

const CANARY = 'canary Ingresses are not supported (canary: "true" leaves the Ingress out)';

/** An annotation no rule reads: unsupported here, or not one ingress-nginx reads either (a misspelling, or another controller's). */
function notSupported(name: string): string {
  if (NGINX_ANNOTATIONS.has(name)) return 'not supported by haproxy-template-ic (see docs/annotations.md)';
  const removed = REMOVED_NGINX_ANNOTATIONS[name];
  if (removed !== undefined) return `removed from ingress-nginx, which no longer reads it: use ${removed}`;
  return 'not an ingress-nginx annotation: ingress-nginx does not read it either (check its name in the ingress-nginx annotations reference)';
}

const UNSUPPORTED: Readonly<Record<string, string>> = {
  'enable-modsecurity': 'ModSecurity is an nginx module',
  'proxy-buffering': 'nginx buffer tuning has no HAProxy equivalent',
  'proxy-buffer-size': 'nginx buffer tuning has no HAProxy equivalent',
  'client-body-buffer-size': 'nginx buffer tuning has no HAProxy equivalent',
  'proxy-next-upstream-timeout': 'not supported: HAProxy retries per its own retry settings',
  'proxy-next-upstream-tries': 'not supported: HAProxy retries per its own retry settings',
  'proxy-next-upstream': 'not supported: HAProxy retries per its own retry settings',
  'limit-whitelist': 'not supported: every source is limited',
  'limit-rate': 'response bandwidth limits are not supported',
  'limit-rate-after': 'response bandwidth limits are not supported',
  'custom-headers': 'headers from a ConfigMap are not read: use request-set-header or response-set-header on the Ingress',
  'cors-expose-headers': 'not supported: no Access-Control-Expose-Headers is sent',
  'affinity-mode': 'HAProxy keeps a client on its server while that server is up ("persistent"); there is no rebalancing mode',
  'session-cookie-path': 'not supported: the cookie is set for the path of the request',
  'preserve-trailing-slash': "not supported: the HTTPS redirect keeps the request's path as it is",
  'proxy-http-version': 'not supported: HAProxy speaks HTTP/1.1 to servers unless backend-protocol says otherwise',
  'from-to-www-redirect': 'not supported: add the other host to the Ingress, or a permanent-redirect Ingress for it',
};

/**
 * nginx.org/*: the annotations of F5's NGINX Ingress Controller, another
 * controller than ingress-nginx. None is read here; the migration report
 * names them, since an Ingress written for that controller is often taken
 * for an ingress-nginx one.
 */
export const nginxIncFamily: AnnotationFamily = {
  prefix: 'nginx.org/',
  rules: [],
  unsupported: () => 'an NGINX Inc. controller annotation (F5 NGINX Ingress Controller), not an ingress-nginx one: neither ingress-nginx nor haproxy-template-ic reads it',
};
