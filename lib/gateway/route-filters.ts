import type { HeaderAction, RedirectCode, RouteSettings } from '../routing/settings.ts';
import { isFields, type Fields } from '../object-fields/fields.ts';
import { checkHost, checkPath, isPortNumber, quote } from '../object-fields/names.ts';
import { readBackendReference, type BackendReference } from './backend-refs.ts';
import { absent, type FieldReader } from './field-reader.ts';
import type { RouteMatch } from './route-matches.ts';
import { checkHeaderName, checkHeaderValue } from './values.ts';
import { readCorsFilter } from './cors-filter.ts';

/**
 * HTTPRoute filters (apis/v1/httproute_types.go HTTPRouteFilter) in the
 * shared settings vocabulary: RequestHeaderModifier, ResponseHeaderModifier,
 * RequestRedirect, URLRewrite, RequestMirror, CORS (cors-filter.ts) and
 * ExternalAuth (protocol HTTP, experimental channel). Any other type
 * (ExtensionRef among them) is refused by name rather than ignored: a route
 * served without a filter it asks for would do something its author did not write.
 */
export interface ReadFilters {
  readonly settings: RouteSettings;
  /** The mirrors' backends, resolved like backendRefs. */
  readonly mirrors: readonly BackendReference[];
  /** The ExternalAuth filter's Service, resolved like backendRefs. */
  readonly authService: BackendReference | undefined;
}

const REDIRECT_CODES: readonly RedirectCode[] = [301, 302, 303, 307, 308];

function headerActions(reader: FieldReader, value: unknown, field: string): HeaderAction[] {
  const actions: HeaderAction[] = [];
  reader.list(value, field).forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const name = reader.take(checkHeaderName(entry['name']), `${at}.name`);
    const headerValue = reader.take(checkHeaderValue(entry['value']), `${at}.value`);
    if (name !== undefined && headerValue !== undefined) actions.push({ name, value: headerValue });
  });
  return actions;
}

function headerModifier(reader: FieldReader, value: Fields | undefined, field: string): NonNullable<RouteSettings['requestHeaders']> {
  const names: string[] = [];
  reader.list(value?.['remove'], `${field}.remove`).forEach((name, index) => {
    const checked = reader.take(checkHeaderName(name), `${field}.remove[${index}]`);
    if (checked !== undefined) names.push(checked);
  });
  return { set: headerActions(reader, value?.['set'], `${field}.set`), add: headerActions(reader, value?.['add'], `${field}.add`), remove: names };
}

/** A path modifier: the whole path replaced, or the matched prefix, which only a rule of PathPrefix matches has. */
function pathModifier(
  reader: FieldReader,
  value: unknown,
  field: string,
  matches: readonly RouteMatch[],
): { kind: 'full'; path: string } | { kind: 'prefix'; replacement: string } | undefined {
  const path = reader.fields(value, field);
  if (path === undefined) return undefined;
  const type = reader.oneOf(path['type'], `${field}.type`, ['ReplaceFullPath', 'ReplacePrefixMatch'], 'ReplaceFullPath');
  if (type === 'ReplaceFullPath') {
    const full = reader.take(checkPath(path['replaceFullPath']), `${field}.replaceFullPath`);
    return full === undefined ? undefined : { kind: 'full', path: full };
  }
  if (type === 'ReplacePrefixMatch') {
    if (matches.some((match) => match.path.kind !== 'prefix')) reader.problem(`${field}.type`, 'ReplacePrefixMatch needs every match of the rule to be a PathPrefix match');
    const replacement = reader.take(checkPath(path['replacePrefixMatch']), `${field}.replacePrefixMatch`);
    return replacement === undefined ? undefined : { kind: 'prefix', replacement };
  }
  return undefined;
}

function hostname(reader: FieldReader, value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const checked = reader.take(checkHost(value), field);
  if (checked?.wildcard) reader.problem(field, `${quote(value)} is a wildcard, where one host name is needed`);
  return checked?.wildcard ? undefined : checked?.host;
}

function redirect(reader: FieldReader, value: Fields | undefined, field: string, matches: readonly RouteMatch[]): RouteSettings['redirect'] {
  const code = value?.['statusCode'] ?? 302;
  if (!REDIRECT_CODES.includes(code as RedirectCode)) reader.problem(`${field}.statusCode`, `${quote(code)} is not one of ${REDIRECT_CODES.join(', ')}`);
  const scheme = absent(value?.['scheme']) ? undefined : reader.oneOf(value?.['scheme'], `${field}.scheme`, ['http', 'https'], 'http');
  const host = hostname(reader, value?.['hostname'], `${field}.hostname`);
  let port: number | undefined;
  if (!absent(value?.['port'])) {
    if (isPortNumber(value?.['port'])) port = value['port'];
    else reader.problem(`${field}.port`, `${quote(value?.['port'])} is not a port number (1-65535)`);
  }
  const path = pathModifier(reader, value?.['path'], `${field}.path`, matches);
  return {
    code: code as RedirectCode,
    ...(scheme ? { scheme } : {}),
    ...(host ? { host } : {}),
    ...(port ? { port } : {}),
    ...(path ? { path } : {}),
  };
}

function mirrorPercent(reader: FieldReader, value: Fields, field: string): number | undefined {
  if (!absent(value['percent']) && !absent(value['fraction'])) reader.problem(field, 'sets both percent and fraction');
  if (!absent(value['percent'])) return reader.integer(value['percent'], `${field}.percent`, 0, 100);
  const fraction = reader.fields(value['fraction'], `${field}.fraction`);
  if (fraction === undefined) return undefined;
  const numerator = reader.integer(fraction['numerator'], `${field}.fraction.numerator`, 0, 2 ** 31 - 1);
  const denominator = reader.integer(fraction['denominator'] ?? 100, `${field}.fraction.denominator`, 1, 2 ** 31 - 1);
  if (numerator === undefined || denominator === undefined) return undefined;
  if (numerator > denominator) reader.problem(`${field}.fraction`, 'has a numerator above its denominator');
  return (numerator / denominator) * 100;
}

function headerNames(reader: FieldReader, value: unknown, field: string): string[] {
  const names: string[] = [];
  reader.list(value, field).forEach((name, index) => {
    const checked = reader.take(checkHeaderName(name), `${field}[${index}]`);
    if (checked !== undefined) names.push(checked.toLowerCase());
  });
  return names;
}

/**
 * The ExternalAuth filter (apis/v1/httproute_types.go HTTPExternalAuthFilter):
 * protocol HTTP is served; GRPC (Envoy's ext_authz protobufs) and forwardBody
 * are refused by name, since served without them the auth service would judge
 * another request than its author meant.
 */
function externalAuth(
  reader: FieldReader,
  value: Fields | undefined,
  field: string,
  namespace: string,
): { settings: RouteSettings['gatewayExternalAuth']; service: BackendReference | undefined } {
  const none = { settings: undefined, service: undefined };
  if (value === undefined) return none;
  const protocol = value['protocol'];
  if (protocol === 'GRPC') {
    reader.problem(`${field}.protocol`, 'GRPC (the ext_authz protocol) is not supported: only HTTP auth services are');
    return none;
  }
  if (protocol !== 'HTTP') {
    reader.problem(`${field}.protocol`, `${quote(protocol)} is not HTTP or GRPC`);
    return none;
  }
  const body = reader.fields(value['forwardBody'], `${field}.forwardBody`);
  if (body !== undefined && !absent(body['maxSize']) && body['maxSize'] !== 0)
    reader.problem(`${field}.forwardBody.maxSize`, 'forwarding the body to the auth service is not supported: only its headers are sent');
  const target = reader.fields(value['backendRef'], `${field}.backendRef`);
  if (target === undefined) {
    reader.problem(`${field}.backendRef`, 'is missing');
    return none;
  }
  const service = readBackendReference(reader, target, `${field}.backendRef`, namespace);
  const http = reader.fields(value['http'], `${field}.http`);
  const path = absent(http?.['path']) || http?.['path'] === '' ? '' : reader.take(checkPath(http?.['path']), `${field}.http.path`);
  const allowedHeaders = headerNames(reader, http?.['allowedHeaders'], `${field}.http.allowedHeaders`);
  const allowedResponseHeaders = headerNames(reader, http?.['allowedResponseHeaders'], `${field}.http.allowedResponseHeaders`);
  if (service?.port === undefined || path === undefined) return { settings: undefined, service };
  return { settings: { namespace: service.namespace, service: service.name, port: service.port, path, allowedHeaders, allowedResponseHeaders }, service };
}

/** Every filter type an HTTPRoute may have served. */
export const HTTP_ROUTE_FILTERS: readonly string[] = ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite', 'RequestMirror', 'CORS', 'ExternalAuth'];

/**
 * Reads a list of filters into settings; the problems are recorded on the
 * reader. `types`: the filter types the route's kind has (a GRPCRoute has
 * fewer); any other is refused by name.
 */
export function readFilters(reader: FieldReader, value: unknown, field: string, namespace: string, matches: readonly RouteMatch[], types: readonly string[]): ReadFilters {
  const settings: { -readonly [K in keyof RouteSettings]: RouteSettings[K] } = {};
  const mirrors: BackendReference[] = [];
  let authService: BackendReference | undefined;
  const seen = new Set<string>();
  reader.list(value, field).forEach((entry, index) => {
    const at = `${field}[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const type = entry['type'];
    if (typeof type !== 'string') return reader.problem(`${at}.type`, `${quote(type)} is not a filter type`);
    // The specification allows several RequestMirror filters (a copy to each), one of every other type.
    if (seen.has(type) && type !== 'RequestMirror') return reader.problem(`${at}.type`, `${type} is given twice; one is served per rule`);
    seen.add(type);
    if (!types.includes(type)) return reader.problem(`${at}.type`, `${quote(type)} filters are not supported (${types.join(', ')} are)`);
    switch (type) {
      case 'RequestHeaderModifier':
        settings.requestHeaders = headerModifier(reader, reader.fields(entry['requestHeaderModifier'], `${at}.requestHeaderModifier`), `${at}.requestHeaderModifier`);
        return;
      case 'ResponseHeaderModifier':
        settings.responseHeaders = headerModifier(reader, reader.fields(entry['responseHeaderModifier'], `${at}.responseHeaderModifier`), `${at}.responseHeaderModifier`);
        return;
      case 'RequestRedirect':
        settings.redirect = redirect(reader, reader.fields(entry['requestRedirect'], `${at}.requestRedirect`), `${at}.requestRedirect`, matches);
        return;
      case 'URLRewrite': {
        const rewrite = reader.fields(entry['urlRewrite'], `${at}.urlRewrite`);
        const host = hostname(reader, rewrite?.['hostname'], `${at}.urlRewrite.hostname`);
        const path = pathModifier(reader, rewrite?.['path'], `${at}.urlRewrite.path`, matches);
        if (host) settings.upstreamHost = host;
        if (path) settings.rewrite = path.kind === 'full' ? path : { kind: 'prefix', replacement: path.replacement };
        return;
      }
      case 'RequestMirror': {
        const spec = reader.fields(entry['requestMirror'], `${at}.requestMirror`);
        const target = reader.fields(spec?.['backendRef'], `${at}.requestMirror.backendRef`);
        if (spec === undefined || target === undefined) return reader.problem(`${at}.requestMirror.backendRef`, 'is missing');
        const mirror = readBackendReference(reader, target, `${at}.requestMirror.backendRef`, namespace);
        const percent = mirrorPercent(reader, spec, `${at}.requestMirror`);
        if (mirror === undefined) return;
        mirrors.push(mirror);
        if (mirror.port !== undefined) {
          settings.mirrors = [...(settings.mirrors ?? []), { namespace: mirror.namespace, service: mirror.name, port: mirror.port, ...(percent === undefined ? {} : { percent }) }];
        }
        return;
      }
      case 'CORS': {
        const cors = readCorsFilter(reader, reader.fields(entry['cors'], `${at}.cors`), `${at}.cors`);
        if (cors) settings.cors = cors;
        return;
      }
      case 'ExternalAuth': {
        const auth = externalAuth(reader, reader.fields(entry['externalAuth'], `${at}.externalAuth`), `${at}.externalAuth`, namespace);
        authService = auth.service;
        if (auth.settings) settings.gatewayExternalAuth = auth.settings;
        return;
      }
    }
  });
  if (seen.has('RequestRedirect') && seen.has('URLRewrite')) reader.problem(field, 'has both RequestRedirect and URLRewrite, which cannot be served together');
  return { settings, mirrors, authService };
}
