import { EXTERNAL_AUTH_VARIABLES } from '../lua/external-auth.ts';
import { failClosedRule } from './fail-closed.ts';
import { isValid, parsePresent, type RuleRead, type SettingRule } from './rule.ts';
import type { RouteSettings } from '../routing/settings.ts';
import { ignoreAll } from './shared-rules.ts';
import { parseUrl } from './text-values.ts';
import { accept, parseBoolean, refuse, type Parsed } from './values.ts';

/**
 * ingress-nginx's external authentication (auth-url and what only means
 * something with it), read as internal/ingress/annotations/authreq/main.go
 * reads it and as rootfs/etc/nginx/template/nginx.tmpl serves it. Served
 * by the controller's Lua action (lib/lua/external-auth.ts); what it cannot
 * serve and would weaken the check leaves the Ingress out (fail closed).
 */

type Method = NonNullable<NonNullable<RouteSettings['externalAuth']>['method']>;

const SENT: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
/** Methods ingress-nginx accepts for auth-method that HAProxy's httpclient cannot send. */
const NOT_SENT: readonly string[] = ['PATCH', 'CONNECT', 'OPTIONS', 'TRACE'];

/** ingress-nginx's check of auth-response-headers names (headerRegexp), starting with a letter or digit. */
const HEADER = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const REDIRECT_PARAM = /^[A-Za-z0-9_.-]{1,64}$/;
const VARIABLE = /\$([A-Za-z0-9_]+)/g;

/** The redirect parameter ingress-nginx adds to auth-signin when auth-signin-redirect-param is not set. */
const DEFAULT_REDIRECT_PARAM = 'rd';

/** What ingress-nginx adds as the redirect parameter's value: the request's own URL. */
const REQUEST_URL = '$pass_access_scheme://$http_host$escaped_request_uri';

/** A URL or path that may hold the nginx variables the action expands; any other "$" is refused. */
function withVariables(value: string, check: (plain: string) => Parsed<string>): Parsed<string> {
  const unknown = [...value.matchAll(VARIABLE)].map((match) => match[1]!).find((name) => !EXTERNAL_AUTH_VARIABLES.includes(name));
  if (unknown !== undefined) return refuse(`the nginx variable $${unknown} is not supported: use ${EXTERNAL_AUTH_VARIABLES.map((name) => `$${name}`).join(', ')}`);
  const plain = check(value.replace(VARIABLE, 'x'));
  return plain.ok ? accept(value) : plain;
}

/** A URL whose "%" only starts percent-encodings (a sign-in URL with an encoded rd). */
function parseEncodedUrl(value: string): Parsed<string> {
  const plain = parseUrl(value.replace(/%[0-9A-Fa-f]{2}/g, 'x'));
  return plain.ok ? accept(value) : plain;
}

function parseAuthUrl(value: string): Parsed<string> {
  return value.includes('$')
    ? refuse('nginx variables are not supported in auth-url: name the auth service (http://oauth2-proxy.<namespace>.svc.cluster.local/oauth2/auth)')
    : parseUrl(value);
}

function parseMethod(value: string): Parsed<Method> {
  if (SENT.includes(value)) return accept(value as Method);
  return refuse(NOT_SENT.includes(value) ? 'cannot be sent: HAProxy sends auth requests with GET, HEAD, POST, PUT or DELETE' : 'not an HTTP method: use GET, HEAD, POST, PUT or DELETE');
}

function parseHeaderList(value: string): Parsed<readonly string[]> {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const bad = names.find((name) => !HEADER.test(name) || name.length > 128);
  return bad === undefined ? accept(names) : refuse(`"${bad}" is not a header name: use letters, digits, "-" and "_", separated by commas`);
}

/** auth-signin with the redirect parameter ingress-nginx adds (buildAuthSignURL), unless the URL already has it. */
export function signinWithRedirect(signin: string, param: string): string {
  const query = signin.indexOf('?');
  if (query === -1) return `${signin}?${param}=${REQUEST_URL}`;
  const present = signin
    .slice(query + 1)
    .split('&')
    .some((pair) => pair.split('=')[0] === param && pair.length > param.length + 1);
  return present ? signin : `${signin}&${param}=${REQUEST_URL}`;
}

const parseRedirectParam = (value: string): Parsed<string> => (REDIRECT_PARAM.test(value) ? accept(value) : refuse('not a query parameter name: use letters, digits, "-", "_" and "."'));

const AUTH = ['auth-url', 'auth-method', 'auth-signin', 'auth-signin-redirect-param', 'auth-response-headers', 'auth-request-redirect', 'auth-always-set-cookie'];
const NOT_CACHED = ['auth-cache-key', 'auth-cache-duration'];
const KEEPALIVE = ['auth-keepalive', 'auth-keepalive-share-vars', 'auth-keepalive-requests', 'auth-keepalive-timeout'];

export const nginxExternalAuthRule: SettingRule = {
  setting: 'route.externalAuth',
  annotations: [...AUTH, ...NOT_CACHED, ...KEEPALIVE],
  read: (values): RuleRead => {
    if (values('auth-url') === undefined) return { ignored: ignoreAll(values, [...AUTH, ...NOT_CACHED, ...KEEPALIVE], 'auth-url is not set, so ingress-nginx does not use it either') };
    const { values: read, invalid } = parsePresent(values, {
      'auth-url': parseAuthUrl,
      'auth-signin': (value: string) => withVariables(value, parseEncodedUrl),
      'auth-signin-redirect-param': parseRedirectParam,
      'auth-response-headers': parseHeaderList,
      'auth-request-redirect': (value: string) => withVariables(value, (plain) => parseEncodedUrl(plain.startsWith('/') ? `http://x${plain}` : plain)),
      'auth-always-set-cookie': parseBoolean,
    });
    const method = values('auth-method') === undefined ? undefined : parseMethod(values('auth-method')!);
    if (method?.ok === false) {
      if (NOT_SENT.includes(values('auth-method')!))
        return { leftOut: { 'auth-method': `${method.reason}: served without it the route would be checked with another method, so this Ingress is left out` } };
      invalid['auth-method'] = method.reason;
    }
    if (!isValid(invalid)) return { invalid };
    const signin = read['auth-signin'];
    const externalAuth: NonNullable<RouteSettings['externalAuth']> = {
      url: read['auth-url']!,
      ...(method?.ok === true ? { method: method.value } : {}),
      ...(signin === undefined ? {} : { signin: signinWithRedirect(signin, read['auth-signin-redirect-param'] ?? DEFAULT_REDIRECT_PARAM) }),
      requestRedirect: read['auth-request-redirect'] ?? '$request_uri',
      responseHeaders: read['auth-response-headers'] ?? [],
      alwaysSetCookie: read['auth-always-set-cookie'] ?? false,
    };
    return {
      apply: (into) => (into.route.externalAuth = externalAuth),
      ignored: {
        ...ignoreAll(values, NOT_CACHED, 'auth answers are not cached: every request asks the auth service'),
        ...ignoreAll(values, KEEPALIVE, "each auth request uses HAProxy's httpclient, which keeps no connection to the auth service"),
        ...(signin === undefined ? ignoreAll(values, ['auth-signin-redirect-param'], 'auth-signin is not set') : {}),
      },
    };
  },
};

/** Raw nginx (auth-snippet) and headers from a ConfigMap (auth-proxy-set-headers) cannot be served: without them the auth service would judge another request. */
export const nginxExternalAuthLeftOut = failClosedRule(
  'unsupported.nginx-external-auth',
  ['auth-snippet', 'auth-proxy-set-headers'],
  (name, values) =>
    values('auth-url') === undefined
      ? undefined
      : name === 'auth-snippet'
        ? 'auth-snippet is nginx configuration, which HAProxy cannot read: served without it the auth service would judge another request, so this Ingress is left out'
        : 'headers from a ConfigMap are not read: served without them the auth service would judge another request, so this Ingress is left out',
  () => 'auth-url is not set, so ingress-nginx does not use it either',
);

const HAPROXY_NAMES = ['auth-url', 'auth-signin', 'auth-response-headers'];

/**
 * haproxytech's controller has no external authentication (its issues 531
 * and 639 ask for it); `haproxy.org/auth-url` is written by those who
 * expect it (oauth2-proxy's issue 2988). Ignored, the route would be open.
 */
export const haproxyExternalAuthLeftOut: SettingRule = {
  setting: 'unsupported.haproxy-external-auth',
  annotations: HAPROXY_NAMES,
  read: (values) => ({
    leftOut: Object.fromEntries(
      HAPROXY_NAMES.filter((name) => values(name) !== undefined).map((name) => [
        name,
        "haproxytech's controller has no external authentication, so this is not its annotation: use nginx.ingress.kubernetes.io/auth-url (served here); served without it the route would be open to anyone, so this Ingress is left out",
      ]),
    ),
  }),
};
