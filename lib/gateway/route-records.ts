import type { RouteSettings } from '../annotations/settings.ts';
import { CATCH_ALL_HOST, type RouteEntrypoint, type RouteHost, type RouteRecord, type WeightedBackend } from '../routing/route.ts';
import type { AttachedListener } from './attachment.ts';
import { resolveBackend, type BackendLookup, type Unresolved } from './backend-refs.ts';
import type { HttpRoute, RouteRule } from './http-route.ts';

/**
 * An accepted HTTPRoute's rules as route records (lib/routing/route.ts): one
 * record per hostname it is served for, rule and match, on every listener
 * it attached to. A backend that does not resolve keeps its share of the
 * requests, answered 500, as the specification asks; a mirror that does
 * not resolve is dropped (a copy has nobody to wait for its answer).
 */

export interface TranslatedRoute {
  readonly records: readonly RouteRecord[];
  /** Every reference that did not resolve, in field order: ResolvedRefs False with the first reason. */
  readonly unresolved: readonly Unresolved[];
}

function hostOf(hostname: string): RouteHost {
  if (hostname === '*') return { key: CATCH_ALL_HOST, wildcard: 'none' };
  return { key: hostname, wildcard: hostname.startsWith('*.') ? 'suffix' : 'none' };
}

function entrypointOf(listener: AttachedListener): RouteEntrypoint {
  return { port: listener.state.listener.port, protocol: listener.state.listener.protocol === 'HTTPS' ? 'HTTPS' : 'HTTP' };
}

function withoutMirror(settings: RouteSettings): RouteSettings {
  const { mirror: _mirror, ...rest } = settings;
  return rest;
}

interface ResolvedRule {
  readonly rule: RouteRule;
  readonly settings: RouteSettings;
  readonly backends: readonly WeightedBackend[];
}

function resolveRule(route: HttpRoute, rule: RouteRule, lookup: BackendLookup, unresolved: Unresolved[]): ResolvedRule {
  const mirrorFault = rule.mirror && resolveBackend(rule.mirror, route.namespace, lookup);
  if (mirrorFault) unresolved.push(mirrorFault);
  const backends = rule.backends.map((backend): WeightedBackend => {
    const fault = resolveBackend(backend.reference, route.namespace, lookup);
    if (fault) unresolved.push(fault);
    const backendMirrorFault = backend.mirror && resolveBackend(backend.mirror, route.namespace, lookup);
    if (backendMirrorFault) unresolved.push(backendMirrorFault);
    const settings = backendMirrorFault ? withoutMirror(backend.settings) : backend.settings;
    return {
      namespace: backend.reference.namespace,
      service: backend.reference.name,
      port: backend.reference.port ?? 0,
      weight: backend.weight,
      ...(fault ? { refused: fault.message } : {}),
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
    };
  });
  return { rule, settings: mirrorFault ? withoutMirror(rule.settings) : rule.settings, backends };
}

/**
 * The protocol a host's records are served over alone, when `served` (the
 * protocols of every listener served) holds another: undefined when they
 * are served over every one.
 */
function onlyOver(entrypoints: readonly RouteEntrypoint[], served: ReadonlySet<RouteEntrypoint['protocol']>): RouteEntrypoint['protocol'] | undefined {
  const protocols = new Set(entrypoints.map((entrypoint) => entrypoint.protocol));
  if (protocols.size !== 1 || [...served].every((protocol) => protocols.has(protocol))) return undefined;
  return entrypoints[0]!.protocol;
}

/** Records of one route on the listeners it attached to, through any of its parentRefs; `served` holds the protocols of every listener served. */
export function translateRoute(route: HttpRoute, attached: readonly AttachedListener[], lookup: BackendLookup, served: ReadonlySet<RouteEntrypoint['protocol']>): TranslatedRoute {
  const unresolved: Unresolved[] = [];
  const rules = route.rules.map((rule) => resolveRule(route, rule, lookup, unresolved));
  // One record per host, rule and match, served on every entrypoint that leads to it.
  const entrypoints = new Map<string, Map<string, RouteEntrypoint>>();
  for (const listener of attached) {
    for (const hostname of listener.hostnames) {
      const entry = entrypoints.get(hostname) ?? new Map<string, RouteEntrypoint>();
      const entrypoint = entrypointOf(listener);
      entry.set(`${entrypoint.protocol}:${entrypoint.port}`, entrypoint);
      entrypoints.set(hostname, entry);
    }
  }
  const records: RouteRecord[] = [];
  for (const [hostname, entrypointsOf] of entrypoints) {
    const host = hostOf(hostname);
    const sortedEntrypoints = [...entrypointsOf.values()].sort((a, b) => a.port - b.port || (a.protocol < b.protocol ? -1 : 1));
    const only = onlyOver(sortedEntrypoints, served);
    for (const { rule, settings, backends } of rules) {
      rule.matches.forEach((match, index) => {
        records.push({
          host,
          path: match.path,
          headers: match.headers,
          query: match.query,
          method: match.method,
          backends,
          settings,
          entrypoints: sortedEntrypoints,
          ...(only ? { onlyOver: only } : {}),
          origin: { kind: 'HTTPRoute', namespace: route.namespace, name: route.name, age: route.age, rule: rule.index, match: index, field: `spec.rules[${rule.index}].matches[${index}]` },
        });
      });
    }
  }
  return { records, unresolved };
}
