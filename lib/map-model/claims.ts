import type { Problem } from '../pipeline/model.ts';
import { CATCH_ALL_HOST, type RouteRecord, type WeightedBackend } from '../routing/route.ts';
import type { ServedRoutes, TranslatedObject } from '../routing/translated.ts';
import { withBackendFilters } from '../routing/backend-filters.ts';
import { backendChoice, type BackendUse } from './backend-choice.ts';
import { NO_BACKEND } from './backend-names.ts';
import { backendName } from './service-backend-name.ts';
import { withBackendSource } from './backend-settings.ts';
import { HostItem, ModelSource, RouteItem } from './model-source.ts';
import { NO_PROBLEMS } from './problems.ts';
import { routeConditions } from './route-conditions.ts';
import { escapeRegex, rewritesOwnPath, routePolicy, type RoutePolicy } from './route-policies.ts';
import type { HostEntry } from './types.ts';
import type { BackendRef, ClaimsOutcome, RouteClaim } from './claim-types.ts';
import { fitted } from '../collections/fitted.ts';

/**
 * A translated object (lib/routing/translated.ts) as map lines: each route
 * record becomes the lines it asks for in host.map and the path maps, with
 * its backend and policy, before conflicts between objects are settled by
 * the aggregate. The same for every API: what differs between them is in
 * the records (a path's dialect, a backend's port by name).
 */

/** The host line of rules without a host: nobody's, so it names no object. */
const CATCH_ALL_ENTRY: HostEntry = Object.freeze({ host: CATCH_ALL_HOST, wildcard: false });

function serviceBackend({ namespace, service, port }: WeightedBackend): BackendRef {
  return { name: backendName(namespace, service, port), namespace, service, port: typeof port === 'string' ? { name: port } : { number: port } };
}

/**
 * Policies made for one object: where its settings are the object's (an
 * Ingress's annotations, origin.settingsField), its routes with the very
 * same settings and a rewrite that does not depend on the path share one,
 * rather than each hashing them.
 */
class PolicyMaker {
  #settings: RecordSettings | undefined;
  #policy: RoutePolicy | undefined;

  make(settings: RecordSettings, path: string, source: ModelSource, objectWide: boolean): RoutePolicy | undefined {
    if (!objectWide || rewritesOwnPath(settings)) return routePolicy(settings, path, source);
    if (settings !== this.#settings) {
      this.#settings = settings;
      this.#policy = routePolicy(settings, path, source);
    }
    return this.#policy;
  }
}

type RecordSettings = RouteRecord['settings'];

/**
 * Where a record's requests go, and the policy on their way: the Service
 * port's backend; for several backendRefs, a split backend named after the
 * route and rule (three '_' or more, so never a Service port's name), which a
 * weight change keeps; none for a route that answers by itself (a
 * redirect, or 500 for a share no backend takes). A backendRef's own
 * filters join its rule's in its policy: the route's alone for one
 * backendRef, each share's in a choice (backend-choice.ts) for several.
 * Or why it cannot be served.
 */
function routeOf(record: RouteRecord, source: ModelSource, policies: PolicyMaker): BackendUse | { readonly reason: string } {
  const { backends, origin, settings } = record;
  const path = record.path.value;
  const objectWide = origin.settingsField !== undefined;
  const backend = backends[0];
  if (backend === undefined) return { backend: NO_BACKEND, policy: policies.make(settings, path, source, objectWide) };
  if (backends.length === 1) return { backend: serviceBackend(backend), policy: policies.make(withBackendFilters(settings, backend.settings), path, source, objectWide) };
  if (backends.some((share) => share.settings !== undefined)) {
    const shares = backends.map((share) => ({ backend: serviceBackend(share), weight: share.weight, policy: routePolicy(withBackendFilters(settings, share.settings), path, source) }));
    const choice = backendChoice(origin.namespace, origin.name, origin.rule, shares);
    return 'reason' in choice ? choice : { backend: choice, policy: undefined };
  }
  const split = Object.freeze(backends.map(({ namespace, service, port, weight }) => Object.freeze({ namespace, service, port: Number(port), weight })));
  // Another kind than HTTPRoute (a GRPCRoute may have an HTTPRoute's namespace and name) joins its kind to the name; HTTPRoutes' keep theirs.
  const kind = origin.kind === 'HTTPRoute' ? '' : `_${origin.kind.toLowerCase()}`;
  const name = `${origin.namespace}_${origin.name}_${origin.rule}${kind}_split`;
  return { backend: { name, namespace: origin.namespace, service: origin.name, port: { number: origin.rule }, split }, policy: policies.make(settings, path, source, objectWide) };
}

/** The key of a regex line: matched against "<host key><path>". */
function regexKey(host: string, path: Extract<RouteRecord['path'], { kind: 'regex' }>): string {
  // ingress-nginx's `location ~*`: case-insensitive, from the path's start.
  if (path.dialect === 'nginx') return `(?i)^${escapeRegex(host)}${path.value}`;
  return `^${escapeRegex(host)}(?:${path.value})$`;
}

/** One claim of a record: a map line under `key`, to `backend` with `policy`. */
function claimOf(
  translated: TranslatedObject,
  record: RouteRecord,
  use: BackendUse,
  conditions: RouteClaim['conditions'],
  source: ModelSource,
  map: RouteClaim['map'],
  key: string,
  fromExactPath: boolean,
): RouteClaim {
  const { backend, policy } = use;
  const line = Object.freeze(new RouteItem(key, backend.name, policy, source));
  const { label, place } = translated;
  return {
    map,
    key,
    host: record.host.key,
    asked: backend,
    backend,
    fromExactPath,
    policy,
    conditions,
    field: record.origin.field,
    ingress: translated.key,
    label,
    place,
    rank: record,
    line,
  };
}

/** Every host key an object claims, by rules or TLS entries, each once. */
function hostKeysOf(hosts: readonly HostEntry[], tls: ServedRoutes['tls']): readonly string[] {
  // Most objects name one host and no TLS entry: no set for them.
  if (hosts.length === 1 && tls.length === 0) return [hosts[0]!.host];
  const keys = new Set<string>();
  for (const host of hosts) keys.add(host.host);
  for (const claim of tls) for (const host of claim.hosts) keys.add(host);
  return [...keys];
}

/** The claims of one translated object. */
export function claimsOf(translated: TranslatedObject): ClaimsOutcome {
  const { object, kind, label, place, served } = translated;
  if (served === undefined) return { read: { served: undefined, problems: translated.problems, place }, warnings: NO_PROBLEMS };
  const hosts: HostEntry[] = served.hosts.map((host) =>
    host.field === undefined ? CATCH_ALL_ENTRY : Object.freeze(new HostItem(host.key, host.wildcard !== 'none', new ModelSource(kind, object, host.field))),
  );
  const routes: RouteClaim[] = [];
  const warnings: Problem[] = [];
  const policies = new PolicyMaker();
  // The object-wide settings' source, made once for all its routes.
  let settingsSource: ModelSource | undefined;
  for (const record of served.routes) {
    const { field, settingsField } = record.origin;
    // The lines of one record share their source.
    const source = new ModelSource(kind, object, field);
    if (settingsField !== undefined) settingsSource ??= new ModelSource(kind, object, settingsField);
    const route = routeOf(record, settingsField === undefined ? source : settingsSource!, policies);
    if ('reason' in route) {
      warnings.push({ object: label, field, message: `not served for host ${record.host.key}: ${route.reason} not routed yet` });
      continue;
    }
    const host = record.host.key;
    const conditions = routeConditions(record, source);
    const path = record.path;
    if (path.kind === 'exact') routes.push(claimOf(translated, record, route, conditions, source, 'exact', host + path.value, true));
    else if (path.kind === 'regex') routes.push(claimOf(translated, record, route, conditions, source, 'regex', regexKey(host, path), false));
    else {
      // Element-wise (lib/routing/route.ts keeps a prefix without a trailing '/'): an exact line and a prefix line.
      const trimmed = path.value === '/' ? '' : path.value;
      if (trimmed !== '') routes.push(claimOf(translated, record, route, conditions, source, 'exact', host + trimmed, false));
      routes.push(claimOf(translated, record, route, conditions, source, 'prefix', `${host}${trimmed}/`, false));
    }
  }
  const defaultBackend = served.defaultBackend && serviceBackend(served.defaultBackend.backend);
  return {
    read: {
      place,
      problems: translated.problems,
      served: {
        label,
        namespace: served.namespace,
        ...(served.hostGroup === undefined ? {} : { hostGroup: served.hostGroup }),
        hosts,
        hostKeys: hostKeysOf(hosts, served.tls),
        routes: fitted(routes),
        defaultBackend: defaultBackend && { asked: defaultBackend, backend: defaultBackend, field: served.defaultBackend!.field },
        tls: served.tls,
        settings: withBackendSource(served.settings, kind, object),
      },
    },
    warnings: warnings.length > 0 ? warnings : NO_PROBLEMS,
  };
}
