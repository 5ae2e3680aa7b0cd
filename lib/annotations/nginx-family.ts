import { parseCidrList } from './addresses.ts';
import { parseNginxBalance, parseUpstreamHashBy } from './balance.ts';
import { balanceOutcome, listRule } from './shared-rules.ts';
import { isValid, parsePresent, setBackendTimeout, singleRule, type AnnotationFamily, type RuleRead, type SettingRule } from './rule.ts';
import type { BackendSettings } from './settings.ts';
import { parseHost, parseSecretRef } from './text-values.ts';
import { accept, parseBoolean, parseSeconds, refuse, type Parsed } from './values.ts';

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
  ],
  unsupported: (name) => UNSUPPORTED[name] ?? (name.startsWith('canary') ? CANARY : 'not supported by haproxy-template-ic (see docs/annotations.md)'),
};

const snippet = 'snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read)';
const CANARY = 'canary Ingresses are not supported: this Ingress would be served as an ordinary one';

const UNSUPPORTED: Readonly<Record<string, string>> = {
  'configuration-snippet': snippet,
  'server-snippet': snippet,
  'stream-snippet': snippet,
  'auth-snippet': snippet,
  'modsecurity-snippet': snippet,
  'ssl-passthrough': 'not supported: TLS is terminated by HAProxy',
  'auth-url': 'external authentication is not supported',
  'auth-tls-secret': 'client certificate authentication is not supported',
  'enable-modsecurity': 'ModSecurity is an nginx module',
  'proxy-buffering': 'nginx buffer tuning has no HAProxy equivalent',
  'proxy-buffer-size': 'nginx buffer tuning has no HAProxy equivalent',
  'client-body-buffer-size': 'nginx buffer tuning has no HAProxy equivalent',
  'proxy-next-upstream-timeout': 'not supported: HAProxy retries per its own retry settings',
  'proxy-next-upstream-tries': 'not supported: HAProxy retries per its own retry settings',
  'proxy-next-upstream': 'not supported: HAProxy retries per its own retry settings',
};
