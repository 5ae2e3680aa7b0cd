import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { GATEWAY_GROUP, KINDS } from './api.ts';
import type { GatewayApiSources } from './gateway-api.ts';
import { lookupInEach } from '../store/lookup-in-each.ts';

const NO_OBJECTS: readonly KubeObject[] = Object.freeze([]);

/** True when the configuration watches a kind of the Gateway API group. */
export function watchesGatewayApi(resources: readonly WatchedResource[]): boolean {
  return resources.some((resource) => resource.apiVersion.startsWith(`${GATEWAY_GROUP}/`));
}

/** The store of a kind of a group ('' for the core group), whatever the configuration names it; none when the kind is not watched. */
export function storeOf(stores: ReadonlyMap<string, StoreReader>, resources: readonly WatchedResource[], group: string, kind: string): StoreReader | undefined {
  const resource = resources.find((candidate) => candidate.kind === kind && (group === '' ? !candidate.apiVersion.includes('/') : candidate.apiVersion.startsWith(`${group}/`)));
  return resource && stores.get(resource.name);
}

/**
 * The Gateway API sources from the watched stores, found by group and kind
 * whatever the configuration names them: the Gateway API kinds in the
 * gateway.networking.k8s.io group (ListenerSets among them), Services, Secrets (of every watch),
 * Namespaces and ConfigMaps in the core group. A kind not watched reads as
 * none (a Namespace selector then admits no namespace). The context is
 * every store but the routes' and its version, with the controller name:
 * what a memo's route
 * outcomes depend on.
 */
export function storeSources(stores: ReadonlyMap<string, StoreReader>, resources: readonly WatchedResource[], settings: ControllerConfig['gatewayApi']): GatewayApiSources {
  const { controllerName, httpPort, httpsPort } = settings;
  const store = (group: string, kind: string) => storeOf(stores, resources, group, kind);
  const [classes, gateways, routes, grpcRoutes, grants, tlsRoutes, tcpRoutes, listenerSets, backendTlsPolicies] = [
    KINDS.gatewayClass,
    KINDS.gateway,
    KINDS.httpRoute,
    KINDS.grpcRoute,
    KINDS.referenceGrant,
    KINDS.tlsRoute,
    KINDS.tcpRoute,
    KINDS.listenerSet,
    KINDS.backendTlsPolicy,
  ].map((kind) => store(GATEWAY_GROUP, kind));
  const [services, namespaces, configMaps] = ['Service', 'Namespace', 'ConfigMap'].map((kind) => store('', kind));
  // Every Secret watch: TLS Secrets for certificateRefs, and the Opaque ones CA certificates are usually kept in.
  const secrets = resources.filter((resource) => resource.kind === 'Secret' && !resource.apiVersion.includes('/')).map((resource) => stores.get(resource.name));
  const others = [classes, gateways, listenerSets, grants, services, ...secrets, namespaces, configMaps];
  return {
    controllerName,
    frontends: [
      { port: httpPort, protocol: 'HTTP' },
      { port: httpsPort, protocol: 'HTTPS' },
    ],
    gatewayClasses: classes?.list() ?? [],
    gateways: gateways?.list() ?? [],
    listenerSets: listenerSets?.list() ?? [],
    httpRoutes: routes?.list() ?? [],
    // The same empty list every time while a kind is not watched: the model (and its layer-4 part) is then kept (gateway-api.ts).
    grpcRoutes: grpcRoutes?.list() ?? NO_OBJECTS,
    tlsRoutes: tlsRoutes?.list() ?? NO_OBJECTS,
    tcpRoutes: tcpRoutes?.list() ?? NO_OBJECTS,
    backendTlsPolicies: backendTlsPolicies?.list() ?? NO_OBJECTS,
    referenceGrants: grants?.list() ?? [],
    service: (namespace, name) => services?.get(namespace, name),
    secret: lookupInEach(secrets),
    configMap: (namespace, name) => configMaps?.get(namespace, name),
    namespace: (name) => namespaces?.get(undefined, name),
    context: [controllerName, httpPort, httpsPort, ...others, ...others.map((reader) => reader?.version)],
  };
}
