import type { RouteSettings } from '../routing/settings.ts';
import { CATCH_ALL_HOST, type RouteEntrypoint, type RouteHost, type RouteRecord, type WeightedBackend } from '../routing/route.ts';
import type { AttachedListener } from './attachment.ts';
import { resolveBackend, type BackendLookup, type BackendReference, type Referrer, type Unresolved } from './backend-refs.ts';
import type { HttpRoute, RouteRule } from './http-route.ts';

/**
 * An accepted HTTPRoute's rules as route records (lib/routing/route.ts): one
 * record per hostname it is served for, rule and match, on every listener
 * it attached to. A backend that does not resolve keeps its share of the
 * requests, answered 500, as the specification asks; a mirror that does
 * not resolve is dropped (a copy has nobody to wait for its answer); an
 * ExternalAuth Service that does not resolve has every request of the rule
 * answered 500 (the filter fails closed).
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

/**
 * What a host's records ask of client certificates: those of the first
 * HTTPS listener leading to it that accepts only valid ones. Its crt-list
 * line already refuses a handshake without one; the routes refuse too, for
 * a request that came through another name's line (SNI and Host differ:
 * 421) or through a bind that lets failed certificates by for the lines
 * of other listeners or Ingresses (400).
 */
function clientCertificateOf(listeners: readonly AttachedListener[]): RouteSettings['clientCertificate'] {
  const clientCa = listeners.find((listener) => listener.state.clientCa?.mode === 'AllowValidOnly')?.state.clientCa;
  return clientCa && { ca: clientCa.ca, verify: 'on', passCertificate: false, overTlsOnly: true };
}

function entrypointOf(listener: AttachedListener): RouteEntrypoint {
  return { port: listener.state.listener.port, protocol: listener.state.listener.protocol === 'HTTPS' ? 'HTTPS' : 'HTTP' };
}

/** The settings without the mirrors whose backends do not resolve (`refused`): the others still get their copies. */
function withoutMirrors(settings: RouteSettings, refused: readonly BackendReference[]): RouteSettings {
  if (refused.length === 0) return settings;
  const { mirrors, ...rest } = settings;
  const kept = (mirrors ?? []).filter((mirror) => !refused.some((ref) => ref.namespace === mirror.namespace && ref.name === mirror.service && ref.port === mirror.port));
  return kept.length > 0 ? { ...rest, mirrors: kept } : rest;
}

/** The mirrors whose backends do not resolve, their faults recorded. */
function refusedMirrors(mirrors: readonly BackendReference[], route: Referrer, lookup: BackendLookup, unresolved: Unresolved[]): BackendReference[] {
  return mirrors.filter((mirror) => {
    const fault = resolveBackend(mirror, route, lookup);
    if (fault) unresolved.push(fault);
    return fault !== undefined;
  });
}

/** The rule's settings with its ExternalAuth Service refused when it does not resolve, the fault recorded. */
function withAuthResolved(settings: RouteSettings, rule: RouteRule, route: Referrer, lookup: BackendLookup, unresolved: Unresolved[]): RouteSettings {
  const auth = settings.gatewayExternalAuth;
  if (auth === undefined || rule.authService === undefined) return settings;
  const fault = resolveBackend(rule.authService, route, lookup);
  if (fault === undefined) return settings;
  unresolved.push(fault);
  return { ...settings, gatewayExternalAuth: { ...auth, refused: fault.message } };
}

interface ResolvedRule {
  readonly rule: RouteRule;
  readonly settings: RouteSettings;
  readonly backends: readonly WeightedBackend[];
}

function resolveRule(route: HttpRoute, rule: RouteRule, lookup: BackendLookup, unresolved: Unresolved[]): ResolvedRule {
  const refused = refusedMirrors(rule.mirrors, route, lookup, unresolved);
  const backends = rule.backends.map((backend): WeightedBackend => {
    const fault = resolveBackend(backend.reference, route, lookup);
    if (fault) unresolved.push(fault);
    const settings = withoutMirrors(backend.settings, refusedMirrors(backend.mirrors, route, lookup, unresolved));
    return {
      namespace: backend.reference.namespace,
      service: backend.reference.name,
      port: backend.reference.port ?? 0,
      weight: backend.weight,
      ...(fault ? { refused: fault.message } : {}),
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
    };
  });
  return { rule, settings: withAuthResolved(withoutMirrors(rule.settings, refused), rule, route, lookup, unresolved), backends };
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
  const listenersOf = new Map<string, AttachedListener[]>();
  for (const listener of attached) {
    for (const hostname of listener.hostnames) {
      const entry = entrypoints.get(hostname) ?? new Map<string, RouteEntrypoint>();
      const entrypoint = entrypointOf(listener);
      entry.set(`${entrypoint.protocol}:${entrypoint.port}`, entrypoint);
      entrypoints.set(hostname, entry);
      listenersOf.set(hostname, [...(listenersOf.get(hostname) ?? []), listener]);
    }
  }
  const records: RouteRecord[] = [];
  for (const [hostname, entrypointsOf] of entrypoints) {
    const host = hostOf(hostname);
    const sortedEntrypoints = [...entrypointsOf.values()].sort((a, b) => a.port - b.port || (a.protocol < b.protocol ? -1 : 1));
    const only = onlyOver(sortedEntrypoints, served);
    const clientCertificate = clientCertificateOf(listenersOf.get(hostname) ?? []);
    for (const { rule, settings: ruleSettings, backends } of rules) {
      const settings = clientCertificate ? { ...ruleSettings, clientCertificate } : ruleSettings;
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
          origin: { kind: route.kind, namespace: route.namespace, name: route.name, age: route.age, rule: rule.index, match: index, field: `spec.rules[${rule.index}].matches[${index}]` },
        });
      });
    }
  }
  return { records, unresolved };
}
