import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import type { MapModelSources } from '../map-model/types.ts';
import type { TranslatedObject } from '../routing/translated.ts';
import { ingressTranslator } from '../ingress/translate-ingress.ts';
import { translateHttpRoute } from '../gateway/translate-http-route.ts';
import { TranslationCache } from '../gateway/translation-cache.ts';
import { certificateClaims } from '../gateway/certificates.ts';
import { GatewayApiMemo, readGatewayApi, type GatewayApiModel, type RouteOutcome } from '../gateway/gateway-api.ts';
import { storeSources, watchesGatewayApi } from '../gateway/store-sources.ts';
import { RoutingOutcome, type GatewayTranslation } from './routing-outcome.ts';
import { lookupInEach } from '../store/lookup-in-each.ts';

const serviceNameLabel = 'kubernetes.io/service-name';

function isKind(resource: WatchedResource, kind: string, plural: string): boolean {
  return resource.kind === kind || resource.resource === plural;
}

/** True when the store is indexed by namespace, then the EndpointSlice's service label. */
function indexedByService(resource: WatchedResource): boolean {
  const [first, second] = resource.indexBy.map((path) => path.segments.join('\u0000'));
  return first === ['metadata', 'namespace'].join('\u0000') && second === ['metadata', 'labels', serviceNameLabel].join('\u0000');
}

/** The watched resources the Ingress view model reads, by their role. */
export interface IngressResources {
  readonly ingresses: WatchedResource | undefined;
  readonly services: WatchedResource | undefined;
  readonly slices: WatchedResource | undefined;
  readonly secrets: WatchedResource | undefined;
}

export function ingressResources(config: ControllerConfig): IngressResources {
  const find = (kind: string, plural: string) => config.watchedResources.find((r) => isKind(r, kind, plural));
  return { ingresses: find('Ingress', 'ingresses'), services: find('Service', 'services'), slices: find('EndpointSlice', 'endpointslices'), secrets: find('Secret', 'secrets') };
}

/**
 * Connects the typed Ingress view model to the watched stores, when the
 * configuration watches Ingresses, Services and EndpointSlices (Secrets are
 * optional: without them TLS entries are reported missing). Lookups go
 * through the indexes when the configuration indexes the way the model
 * asks, and fall back to a scan otherwise.
 */
export function mapModelSources(config: ControllerConfig, stores: ReadonlyMap<string, StoreReader>, cache?: RouteSourcesCache): MapModelSources | undefined {
  return sourcesWith(config, stores, () => gatewayTranslation(config, stores, cache)?.routed ?? {});
}

/**
 * The routing view's sources, and what its translation made of the
 * objects (routing-outcome.ts) for the status side streams: the same
 * translation, made once. The Gateway API model is read whenever a
 * Gateway API kind is watched, for its status, even when nothing routes.
 */
export function routingSources(
  config: ControllerConfig,
  stores: ReadonlyMap<string, StoreReader>,
  cache?: RouteSourcesCache,
): { readonly sources: MapModelSources | undefined; readonly outcome: RoutingOutcome } {
  const gateway = gatewayTranslation(config, stores, cache);
  return { sources: sourcesWith(config, stores, () => gateway?.routed ?? {}), outcome: new RoutingOutcome(config, stores, gateway) };
}

function sourcesWith(config: ControllerConfig, stores: ReadonlyMap<string, StoreReader>, gatewayRoutes: () => GatewayRoutes): MapModelSources | undefined {
  const { ingresses, services, slices, secrets } = ingressResources(config);
  if (!ingresses || !services || !slices) return undefined;
  const store = (resource: WatchedResource | undefined) => (resource ? stores.get(resource.name) : undefined);
  // TLS Secrets first, then every other watched Secret resource (basic auth's Opaque Secrets).
  const secretStores = [secrets, ...config.watchedResources.filter((resource) => resource !== secrets && isKind(resource, 'Secret', 'secrets'))].map(store);
  const ingressStore = store(ingresses);
  const sliceStore = store(slices);
  // Like the Secrets, ConfigMaps matter to certificates (Gateway listeners' client CAs) alone.
  const configMapStore = store(config.watchedResources.find((resource) => isKind(resource, 'ConfigMap', 'configmaps')));
  const byIndex = indexedByService(slices);
  const changesSince = ingressStore?.changesSince?.bind(ingressStore);
  return {
    ...gatewayRoutes(),
    className: config.ingress.className,
    translate: ingressTranslator(config.ingress.className),
    sharedHostNamespaces: config.ingress.sharedHostNamespaces,
    ingresses: ingressStore?.list() ?? [],
    stores: [ingressStore, store(services), sliceStore, ...secretStores, configMapStore],
    ingressChanges: ingressStore &&
      changesSince && {
        version: ingressStore.version,
        since: changesSince,
        current: (ingress) => ingressStore.get(ingress.metadata.namespace, ingress.metadata.name),
      },
    service: (namespace, name) => store(services)?.get(namespace, name),
    endpointSlices: (namespace, service): readonly KubeObject[] => {
      if (!sliceStore) return [];
      if (byIndex) return sliceStore.lookup(namespace, service);
      return sliceStore.list().filter((slice) => slice.metadata.namespace === namespace && slice.metadata.labels?.[serviceNameLabel] === service);
    },
    secret: lookupInEach(secretStores),
    configMap: (namespace, name) => configMapStore?.get(namespace, name),
    versions: {
      services: store(services)?.version ?? -1,
      endpointSlices: sliceStore?.version ?? -1,
      secrets: secretStores.map((reader) => reader?.version ?? -1),
      configMaps: configMapStore?.version ?? -1,
    },
    // Secrets and ConfigMaps only matter to certificates, client CAs and userlists, which are always looked at again when their versions move.
    changedSince: (versions) => {
      const changed: KubeObject[] = [];
      for (const [reader, since] of [
        [store(services), versions.services],
        [sliceStore, versions.endpointSlices],
      ] as const) {
        if (!reader) continue;
        if (!reader.changesSince) return undefined;
        const objects = reader.changesSince(since);
        if (objects === undefined) return undefined;
        changed.push(...objects);
      }
      return changed;
    },
  };
}

/**
 * What one build of the sources leaves for the next, so that 10k HTTPRoutes
 * are not judged and translated again at every render: the Gateway API
 * model's memo, and each HTTPRoute's translation, kept while its records
 * are the same (so the map model sees the same translation and reads the
 * route no further).
 */
export class RouteSourcesCache {
  readonly gatewayApi = new GatewayApiMemo();
  readonly translations = new TranslationCache();
  /** The last model's routes, translated. */
  last: RoutesTranslated | undefined;
}

type GatewayRoutes = Pick<MapModelSources, 'httpRoutes' | 'gatewayProblems' | 'gatewayCertificates' | 'l4' | 'servicePortTls'>;

/** The routes of a Gateway API model translated, and what the map model is given of them. */
export interface RoutesTranslated extends GatewayTranslation {
  readonly routed: GatewayRoutes;
}

/**
 * The HTTPRoutes this controller's Gateways accept, translated, and the
 * Gateway API's problems; nothing when the configuration watches no
 * Gateway API kind. What an HTTPRoute is served as depends on its
 * Gateways, grants and Services: with a cache, only the HTTPRoutes that
 * changed are judged and translated again while those stay the same.
 */
function gatewayTranslation(config: ControllerConfig, stores: ReadonlyMap<string, StoreReader>, cache: RouteSourcesCache | undefined): RoutesTranslated | undefined {
  if (!watchesGatewayApi(config.watchedResources)) return undefined;
  const model = readGatewayApi(storeSources(stores, config.watchedResources, config.gatewayApi), cache?.gatewayApi);
  if (cache?.last?.model === model) return cache.last;
  const translated = translateRoutes(model, cache);
  if (cache) cache.last = translated;
  return translated;
}

/** Each HTTPRoute's translation (its records in precedence order), and the model's problems. */
export function routedObjects(model: GatewayApiModel): GatewayRoutes {
  return translateRoutes(model).routed;
}

/**
 * The model's routes translated. A cache keeps the last translation of
 * each while its records are the same; an outcome in the same place as in
 * the last model is not looked up at all.
 */
export function translateRoutes(model: GatewayApiModel, cache?: RouteSourcesCache): RoutesTranslated {
  const httpRoutes: TranslatedObject[] = [];
  const previous = cache?.last;
  const outcomes: RouteOutcome[] = [];
  const translatedList: (TranslatedObject | undefined)[] = [];
  for (const outcome of model.routes.values()) {
    const at = outcomes.length;
    const translated = previous?.outcomes[at] === outcome ? previous.translated[at] : translation(outcome, cache?.translations);
    outcomes.push(outcome);
    translatedList.push(translated);
    if (translated) httpRoutes.push(translated);
  }
  const gatewayCertificates = certificateClaims(model).map(({ namespace, secret, hosts, object, field, fallback, clientCa }) => ({
    namespace,
    name: secret,
    hosts,
    label: object,
    field,
    ...(fallback ? { fallback } : {}),
    ...(clientCa ? { clientCa } : {}),
  }));
  return { model, outcomes, translated: translatedList, routed: { httpRoutes, gatewayProblems: model.excluded, gatewayCertificates, l4: model.l4, servicePortTls: model.backendTls.byPort } };
}

function translation(outcome: RouteOutcome, kept: TranslationCache | undefined): TranslatedObject | undefined {
  if (outcome.records.length === 0) return undefined;
  return kept ? kept.translation(outcome) : translateHttpRoute(outcome);
}
