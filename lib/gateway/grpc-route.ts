import { isFields } from '../object-fields/fields.ts';
import { quote } from '../object-fields/names.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { PathMatch } from '../routing/route.ts';
import { KINDS } from './api.ts';
import { absent, type FieldReader } from './field-reader.ts';
import { readRouteObject, ruleReader, type HttpRouteRead } from './http-route.ts';
import { DEFAULT_MATCH, readValueMatches, type RouteMatch } from './route-matches.ts';
import { checkRegex } from './values.ts';

/**
 * Reading one GRPCRoute (apis/v1/grpcroute_types.go): parents, hostnames
 * and backendRefs as an HTTPRoute has them (http-route.ts), its matches
 * turned into what they are on the wire. A gRPC call is a POST to
 * `/<service>/<method>` (the gRPC over HTTP/2 protocol's Path), so a
 * service and a method are an Exact path, a service alone a PathPrefix of
 * its path element, and a method alone or a RegularExpression a regular
 * expression over the whole path; header matches are header matches.
 * Served so, a GRPCRoute shares the host map, the path maps and the
 * backends with the HTTPRoutes and Ingresses, and a new one is a few map
 * lines.
 */

/** The filter types of a GRPCRoute this controller serves: the Core and Extended ones but ExtensionRef. */
export const GRPC_ROUTE_FILTERS: readonly string[] = ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror'];

// The CRD's validation of Exact values (GRPCMethodMatch's XValidation rules), checked again for objects read from files.
const EXACT_SERVICE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const EXACT_METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;
/** What a RegularExpression of an absent service or method stands for: any one path element. */
const ANY_ELEMENT = '[^/]+';

function present(value: unknown): boolean {
  return !absent(value) && value !== '';
}

/** The path a GRPCMethodMatch asks for; undefined, with the problems recorded, when a part fails its check. */
function readMethodMatch(reader: FieldReader, value: unknown, field: string): PathMatch | undefined {
  const method = reader.fields(value, field);
  if (method === undefined) return DEFAULT_MATCH.path;
  const type = reader.oneOf(method['type'], `${field}.type`, ['Exact', 'RegularExpression'], 'Exact');
  const hasService = present(method['service']);
  const hasMethod = present(method['method']);
  if (!hasService && !hasMethod) {
    reader.problem(field, 'names neither a service nor a method');
    return undefined;
  }
  if (type === 'RegularExpression') {
    const service = hasService ? reader.take(checkRegex(method['service']), `${field}.service`) : ANY_ELEMENT;
    const name = hasMethod ? reader.take(checkRegex(method['method']), `${field}.method`) : ANY_ELEMENT;
    if (service === undefined || name === undefined) return undefined;
    return { kind: 'regex', value: `/(?:${service})/(?:${name})` };
  }
  if (type === undefined) return undefined;
  const service = hasService ? exactValue(reader, method['service'], `${field}.service`, EXACT_SERVICE) : undefined;
  const name = hasMethod ? exactValue(reader, method['method'], `${field}.method`, EXACT_METHOD) : undefined;
  if ((hasService && service === undefined) || (hasMethod && name === undefined)) return undefined;
  if (service !== undefined && name !== undefined) return { kind: 'exact', value: `/${service}/${name}` };
  if (service !== undefined) return { kind: 'prefix', value: `/${service}` };
  // A method of any service: one path element, then the method (Implementation-specific support in the specification).
  return { kind: 'regex', value: `/${ANY_ELEMENT}/${name!}` };
}

function exactValue(reader: FieldReader, value: unknown, field: string, pattern: RegExp): string | undefined {
  if (typeof value === 'string' && pattern.test(value)) return value;
  reader.problem(field, `${quote(value)} is not a gRPC ${field.endsWith('.service') ? 'service' : 'method'} name (matching ${pattern.source})`);
  return undefined;
}

function readGrpcMatch(reader: FieldReader, value: unknown, field: string): RouteMatch | undefined {
  if (!isFields(value)) {
    reader.problem(field, 'is not an object');
    return undefined;
  }
  const path = readMethodMatch(reader, value['method'], `${field}.method`);
  const headers = readValueMatches(reader, value['headers'], `${field}.headers`, true);
  if (path === undefined || headers === undefined) return undefined;
  return { path, headers, query: [], method: undefined };
}

const readGrpcRule = ruleReader({ readMatch: readGrpcMatch, filterTypes: GRPC_ROUTE_FILTERS, timeouts: false });

export function readGrpcRoute(object: KubeObject): HttpRouteRead {
  return readRouteObject(object, KINDS.grpcRoute, readGrpcRule);
}
