import { parseCidrList } from './addresses.ts';
import { parseHaproxyBalance } from './balance.ts';
import { corsRule } from './cors.ts';
import { haproxyExternalAuthLeftOut } from './external-auth.ts';
import { haproxyAccessSnippets } from './fail-closed.ts';
import { balanceRule, basicAuthRule, hstsRule, ignoreAll, listRule, requestHeadersRule, responseHeadersRule, sslPassthroughRule } from './shared-rules.ts';
import { isValid, parsePresent, setBackendTimeout, singleRule, type AnnotationFamily, type FamilyValues, type SettingRule } from './rule.ts';
import { parseCookieName, parseHeaderName, parseHost, parsePath, parseRegex, parseReplacement, parseSecretRef } from './text-values.ts';
import { accept, parseBoolean, parseDenyStatus, parseDuration, parseInteger, parseRedirectCode, refuse, type Parsed } from './values.ts';
import type { RouteSettings } from '../routing/settings.ts';

/**
 * haproxy.org/* annotations (haproxytech's kubernetes-ingress), as that
 * controller documents them in documentation/annotations.md. Differences
 * are in docs/annotations.md.
 */

/** haproxytech redirects with 302 unless ssl-redirect-code says otherwise. */
const SSL_REDIRECT_CODE = 302;

const sslRedirect: SettingRule = {
  setting: 'route.sslRedirect',
  annotations: ['ssl-redirect', 'ssl-redirect-code'],
  read: (values, context) => {
    const { values: read, invalid } = parsePresent(values, { 'ssl-redirect': parseBoolean, 'ssl-redirect-code': parseRedirectCode });
    if (!isValid(invalid)) return { invalid };
    // Like haproxytech, a TLS Ingress redirects unless ssl-redirect says "false".
    const enabled = read['ssl-redirect'] ?? context.tls === true;
    if (!enabled) return read['ssl-redirect-code'] === undefined ? {} : { ignored: { 'ssl-redirect-code': 'no redirect: ssl-redirect is not "true" (and the Ingress has no TLS section)' } };
    const code = read['ssl-redirect-code'] ?? SSL_REDIRECT_CODE;
    return { apply: (into) => (into.route.sslRedirect = { code }) };
  },
  absent: (context) => (context.tls === true ? { apply: (into) => (into.route.sslRedirect = { code: SSL_REDIRECT_CODE }) } : {}),
};

function parseServerProto(value: string): Parsed<'h1' | 'h2'> {
  return value === 'h1' || value === 'h2' ? accept(value) : refuse('not a server protocol: use "h2" (or "h1")');
}

const protocol: SettingRule = {
  setting: 'backend.protocol',
  annotations: ['server-ssl', 'server-proto', 'server-ca'],
  read: (values, context) => {
    const { values: read, invalid } = parsePresent(values, {
      'server-ssl': parseBoolean,
      'server-proto': parseServerProto,
      'server-ca': (value: string) => parseSecretRef(value, context.namespace ?? ''),
    });
    if (!isValid(invalid)) return { invalid };
    // As in haproxytech, a CA to verify the servers with implies TLS.
    const tls = read['server-ssl'] === true || read['server-ca'] !== undefined;
    const h2 = read['server-proto'] === 'h2';
    const verifyCa = read['server-ca'];
    return { apply: (into) => (into.backend.protocol = { version: h2 ? (tls ? 'h2' : 'h2c') : 'h1', tls, ...(verifyCa === undefined ? {} : { verifyCa }) }) };
  },
};

/** haproxytech's auth-type has one value. */
const basicAuth = basicAuthRule((value) => (value === 'basic-auth' ? accept(value) : refuse('not an authentication type: use "basic-auth"')), 'Protected Content');

const rateLimit: SettingRule = {
  setting: 'route.rateLimit',
  annotations: ['rate-limit-requests', 'rate-limit-period', 'rate-limit-status-code'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, {
      'rate-limit-requests': (value: string) => parseInteger(value, 1, 1_000_000_000),
      'rate-limit-period': parseDuration,
      'rate-limit-status-code': parseDenyStatus,
    });
    if (!isValid(invalid)) return { invalid };
    const requests = read['rate-limit-requests'];
    if (requests === undefined) return { ignored: ignoreAll(values, ['rate-limit-period', 'rate-limit-status-code'], 'rate-limit-requests is not set') };
    const rate = { requests, period: read['rate-limit-period'] ?? 1000, status: read['rate-limit-status-code'] ?? 403 };
    return { apply: (into) => (into.route.rateLimit = rate) };
  },
};

/**
 * A path, or "regex replacement", or several such lines applied in turn,
 * as haproxytech reads them (pkg/annotations/ingress/reqPathRewrite.go):
 * a line of one word replaces the whole path.
 */
function parsePathRewrite(value: string): Parsed<NonNullable<RouteSettings['rewrite']>> {
  const lines = value.split('\n').filter((line) => line.trim() !== '');
  const rules: { pattern: string; replacement: string }[] = [];
  for (const line of lines) {
    const parts = line.trim().split(/\s+/);
    if (parts.length > 2) return refuse('not a path rewrite: use a path, or a regular expression and its replacement separated by a space');
    if (parts.length === 1) {
      const path = parsePath(parts[0]!);
      if (!path.ok) return path;
      if (lines.length === 1) return accept({ kind: 'full', path: path.value });
      const replacement = parseReplacement(path.value);
      if (!replacement.ok) return replacement;
      rules.push({ pattern: '^.*$', replacement: replacement.value });
      continue;
    }
    const pattern = parseRegex(parts[0]!);
    if (!pattern.ok) return pattern;
    const replacement = parseReplacement(parts[1]!);
    if (!replacement.ok) return replacement;
    rules.push({ pattern: pattern.value, replacement: replacement.value });
  }
  return rules.length === 0 ? refuse('is empty: expected a path, or a regular expression and its replacement') : accept({ kind: 'regex', rules });
}

/** request-redirect: the request's host (and port) replaced, the rest of its URL kept. */
function parseRedirectHost(value: string): Parsed<{ host: string; port?: number }> {
  const host = parseHost(value);
  if (!host.ok) return host;
  const [name, port] = value.split(':');
  return accept(port === undefined ? { host: name! } : { host: name!, port: Number(port) });
}

const redirect: SettingRule = {
  setting: 'route.redirect',
  annotations: ['request-redirect', 'request-redirect-code'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, { 'request-redirect': parseRedirectHost, 'request-redirect-code': parseRedirectCode });
    if (!isValid(invalid)) return { invalid };
    const target = read['request-redirect'];
    if (target === undefined) return { ignored: { 'request-redirect-code': 'request-redirect is not set' } };
    const code = read['request-redirect-code'] ?? 302;
    return { apply: (into) => (into.route.redirect = { code, ...target }) };
  },
};

/** check-http's path; haproxytech's "METHOD path [version]" forms are refused with a hint, the check being GET. */
function parseCheckPath(value: string): Parsed<string> {
  if (/^[A-Z]+\s+\//.test(value)) return refuse('a method (and version) is not supported: give the path alone, checked with GET');
  return parsePath(value);
}

const healthCheck: SettingRule = {
  setting: 'backend.healthCheck',
  annotations: ['check-http', 'check-interval'],
  read: (values) => {
    const { values: read, invalid } = parsePresent(values, { 'check-http': parseCheckPath, 'check-interval': parseDuration });
    if (!isValid(invalid)) return { invalid };
    const check = { ...(read['check-http'] === undefined ? {} : { path: read['check-http'] }), ...(read['check-interval'] === undefined ? {} : { interval: read['check-interval'] }) };
    return { apply: (into) => (into.backend.healthCheck = check) };
  },
};

const SOURCE_LISTS = ['allow-list', 'whitelist', 'deny-list', 'blacklist'];

/**
 * src-ip-header: the client's address from a header a load balancer in
 * front sets. haproxytech makes it the request's source (`set-src`); here
 * it is what the allow- and deny-lists judge, the only settings that read
 * the source per route (rate and connection limits keep counting by the
 * connection's address). Without a list it does nothing, and is ignored.
 */
const sourceHeader: SettingRule = {
  setting: 'route.sourceHeader',
  annotations: ['src-ip-header'],
  read: (values) => {
    const name = parseHeaderName(values('src-ip-header')!.trim());
    if (!name.ok) return { invalid: { 'src-ip-header': name.reason } };
    if (!SOURCE_LISTS.some((list) => values(list) !== undefined))
      return { ignored: { 'src-ip-header': "no allow-list or deny-list on this Ingress reads the source: rate limits and logs keep the connection's address" } };
    return { apply: (into) => (into.route.sourceHeader = name.value) };
  },
};

/** Whether the servers are spoken to over TLS, as the protocol rule reads it: server-ssl "true", or a CA to verify them with. */
function serverTls(values: FamilyValues): boolean {
  const ssl = parseBoolean(values('server-ssl') ?? 'false');
  return (ssl.ok && ssl.value) || values('server-ca') !== undefined;
}

export const haproxyFamily: AnnotationFamily = {
  prefix: 'haproxy.org/',
  rules: [
    sslRedirect,
    protocol,
    singleRule('backend.timeouts.server', 'timeout-server', parseDuration, (into, value) => setBackendTimeout(into, 'server', value)),
    singleRule('backend.timeouts.connect', 'timeout-connect', parseDuration, (into, value) => setBackendTimeout(into, 'connect', value)),
    singleRule('backend.timeouts.tunnel', 'timeout-tunnel', parseDuration, (into, value) => setBackendTimeout(into, 'tunnel', value)),
    balanceRule('load-balance', parseHaproxyBalance),
    singleRule(
      'backend.serverMaxconn',
      'pod-maxconn',
      (value) => parseInteger(value, 1, 1_000_000),
      (into, value) => (into.backend.serverMaxconn = value),
    ),
    listRule('route.allow', ['allow-list', 'whitelist'], parseCidrList, (into, value) => (into.route.allow = value)),
    listRule('route.deny', ['deny-list', 'blacklist'], parseCidrList, (into, value) => (into.route.deny = value)),
    hstsRule(false),
    singleRule('backend.affinity', 'cookie-persistence', parseCookieName, (into, cookie) => (into.backend.affinity = { cookie })),
    basicAuth,
    rateLimit,
    singleRule('route.rewrite', 'path-rewrite', parsePathRewrite, (into, rewrite) => (into.route.rewrite = rewrite)),
    redirect,
    singleRule('route.upstreamHost', 'set-host', parseHost, (into, host) => (into.route.upstreamHost = host)),
    requestHeadersRule,
    responseHeadersRule,
    corsRule({
      enable: 'cors-enable',
      originRegex: true,
      maxAge: (value) => {
        const duration = parseDuration(value);
        return duration.ok ? accept(Math.ceil(duration.value / 1000)) : duration;
      },
      // haproxytech answers a preflight itself only with cors-respond-to-options: "true" (pkg/annotations/ingress/resSetCORS.go).
      respondToPreflight: 'cors-respond-to-options',
      defaults: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false, maxAge: 5, respondToPreflight: false },
    }),
    healthCheck,
    // haproxytech's default is "true" (pkg/annotations/common/main.go): the template sends X-Forwarded-For already.
    singleRule('route.withoutForwardedFor', 'forwarded-for', parseBoolean, (into, send) => {
      if (!send) into.route.withoutForwardedFor = true;
    }),
    sslPassthroughRule(serverTls, 'server-ssl: "true"'),
    haproxyAccessSnippets,
    haproxyExternalAuthLeftOut,
    sourceHeader,
  ],
  unsupported: (name) => UNSUPPORTED[name] ?? 'not supported by haproxy-template-ic (see docs/annotations.md)',
};

const frontendTimeout = 'applies to the frontend every route shares: set it in the template values, not per Ingress';

const CONFIGMAP_CLIENT_CA =
  'a ConfigMap setting of haproxytech, which does not read it from an Ingress either (nothing is asked of clients there); per-host client certificates here: nginx.ingress.kubernetes.io/auth-tls-secret';

const UNSUPPORTED: Readonly<Record<string, string>> = {
  'timeout-client': frontendTimeout,
  'timeout-client-fin': frontendTimeout,
  'timeout-http-request': frontendTimeout,
  'timeout-http-keep-alive': frontendTimeout,
  'timeout-queue': "not supported: HAProxy's default queue timeout (the connect timeout) applies",
  'ssl-redirect-port': "not supported: the redirect keeps the request's host and goes to the default HTTPS port",
  'server-crt': 'not supported: client certificates towards backends are not offered',
  // haproxytech reads these from its ConfigMap only (pkg/handler/https.go, handleClientTLSAuth: k.ConfigMaps.Main), for every HTTPS host at once.
  'client-ca': CONFIGMAP_CLIENT_CA,
  'client-crt-optional': CONFIGMAP_CLIENT_CA,
  'send-proxy-protocol': 'not supported: servers are spoken to in plain HTTP or TLS',
  check: 'servers are checked when check-http or check-interval is set',
  'rate-limit-size': 'not supported: the controller sizes the rate tables',
  'rate-limit-whitelist': 'not supported: every source is limited',
  'cookie-persistence-no-dynamic': "not supported: affinity cookies here are always dynamic (a hash of the server's address), never a fixed value per server",
  'request-capture': 'not supported: request captures change the log format every route shares',
  'request-capture-len': 'not supported: request captures change the log format every route shares',
  'standalone-backend': 'not supported: backends are shared by Service and port',
  'route-acl': 'not supported: routing is by host and path',
  'scale-server-slots': 'not supported: servers follow the endpoints',
};
