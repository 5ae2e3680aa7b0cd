import { parseCidrList } from './addresses.ts';
import { parseHaproxyBalance } from './balance.ts';
import { balanceRule, listRule } from './shared-rules.ts';
import { isValid, parsePresent, setBackendTimeout, singleRule, type AnnotationFamily, type SettingRule } from './rule.ts';
import { parseSecretRef } from './text-values.ts';
import { accept, parseBoolean, parseDuration, parseInteger, parseRedirectCode, refuse, type Parsed } from './values.ts';

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
  ],
  unsupported: (name) => UNSUPPORTED[name] ?? 'not supported by haproxy-template-ic (see docs/annotations.md)',
};

const frontendTimeout = 'applies to the frontend every route shares: set it in the template values, not per Ingress';
const snippet = 'configuration snippets are not supported: raw HAProxy configuration from an object could add any directive';

const UNSUPPORTED: Readonly<Record<string, string>> = {
  'backend-config-snippet': snippet,
  'frontend-config-snippet': snippet,
  'global-config-snippet': snippet,
  'stats-config-snippet': snippet,
  'timeout-client': frontendTimeout,
  'timeout-client-fin': frontendTimeout,
  'timeout-http-request': frontendTimeout,
  'timeout-http-keep-alive': frontendTimeout,
  'timeout-queue': "not supported: HAProxy's default queue timeout (the connect timeout) applies",
  'ssl-redirect-port': "not supported: the redirect keeps the request's host and goes to the default HTTPS port",
  'ssl-passthrough': 'not supported: TLS is terminated by HAProxy',
  'server-crt': 'not supported: client certificates towards backends are not offered',
  'send-proxy-protocol': 'not supported: servers are spoken to in plain HTTP or TLS',
};
