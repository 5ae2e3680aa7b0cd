import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import { GATEWAY_GROUP, KINDS } from '../gateway/api.ts';
import type { GatewayApiModel, RouteOutcome } from '../gateway/gateway-api.ts';
import type { LeftOut } from '../gateway/status.ts';
import type { StatusWrite } from '../gateway/status-writer.ts';
import { storeOf } from '../gateway/store-sources.ts';
import { servesClass } from '../ingress/translate-ingress.ts';
import type { IngressOfClass } from '../kube/ingress-status.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { NOTHING_UNSERVED } from '../map-model/unserved.ts';
import type { TranslatedObject } from '../routing/translated.ts';
import { onlyStatusChanged } from '../store/status-only.ts';
import { leftOutMatches } from './left-out-matches.ts';

/** The Gateway API model one render read (its TLSRoutes and TCPRoutes in its l4Routes), and each of its route outcomes (HTTPRoutes, GRPCRoutes, in the model's order) with the translation it gave. */
export interface GatewayTranslation {
  readonly model: GatewayApiModel;
  readonly outcomes: readonly RouteOutcome[];
  /** Per outcome, at the same place: its translation, none without records. */
  readonly translated: readonly (TranslatedObject | undefined)[];
}

const GATEWAY_KINDS: Readonly<Record<StatusWrite['resource'], string>> = {
  gatewayclasses: KINDS.gatewayClass,
  gateways: KINDS.gateway,
  listenersets: KINDS.listenerSet,
  httproutes: KINDS.httpRoute,
  grpcroutes: KINDS.grpcRoute,
  tlsroutes: KINDS.tlsRoute,
  tcproutes: KINDS.tcpRoute,
  backendtlspolicies: KINDS.backendTlsPolicy,
};

/**
 * What one render's routing translation made of the objects it was given,
 * for the status side streams (Ingress, Gateway API): they read it here
 * rather than judge or translate anything again, so the status says what
 * the rendered configuration serves.
 *
 * Status is written on the objects as stored when it is written: an object
 * the controller wrote status on since (the write comes back as a change
 * of the status alone, which renders nothing) is the stored one; an object
 * changed otherwise, or gone, is left alone, since its own render follows
 * and its status with it.
 */
export class RoutingOutcome {
  readonly #config: ControllerConfig;
  readonly #stores: ReadonlyMap<string, StoreReader>;
  /** Each watched Ingress resource, with its Ingresses as the render was given them. */
  readonly #ingresses: readonly { readonly resource: WatchedResource; readonly listed: readonly KubeObject[] }[];
  readonly #gateway: GatewayTranslation | undefined;
  /** The objects the map model served nothing of, by the keys the render gave it. */
  readonly #unserved: ReadonlySet<KubeObject>;
  #leftOut: ReadonlyMap<KubeObject, LeftOut> | undefined;
  /** The store of each Gateway API kind status is written on, found once. */
  readonly #gatewayStores = new Map<StatusWrite['resource'], StoreReader | undefined>();

  constructor(config: ControllerConfig, stores: ReadonlyMap<string, StoreReader>, gateway: GatewayTranslation | undefined, unserved: ReadonlySet<KubeObject> = NOTHING_UNSERVED) {
    this.#config = config;
    this.#stores = stores;
    this.#gateway = gateway;
    this.#unserved = unserved;
    this.#ingresses = config.watchedResources.filter((resource) => resource.kind === 'Ingress').map((resource) => ({ resource, listed: stores.get(resource.name)?.list() ?? [] }));
  }

  /** The Gateway API model the render read; undefined when the configuration watches no Gateway API kind. */
  get gatewayApi(): GatewayApiModel | undefined {
    return this.#gateway?.model;
  }

  /** What the translation left out of each route as not routed yet, by the route as the model holds it. */
  get leftOut(): ReadonlyMap<KubeObject, LeftOut> {
    this.#leftOut ??= this.#gateway ? leftOutMatches(this.#gateway) : new Map();
    return this.#leftOut;
  }

  /** A Gateway API object of the model as stored now, or undefined for one to leave alone (see the class). */
  readonly currentGatewayObject = (resource: StatusWrite['resource'], object: KubeObject): KubeObject | undefined => {
    if (!this.#gatewayStores.has(resource)) this.#gatewayStores.set(resource, storeOf(this.#stores, this.#config.watchedResources, GATEWAY_GROUP, GATEWAY_KINDS[resource]));
    return storedNow(object, this.#gatewayStores.get(resource));
  };

  /**
   * This outcome with the map model's word on what it served: the objects
   * it served nothing of (lib/map-model/build-model.ts MapModelCache
   * unserved), as the build that followed this translation decided them.
   */
  servedAs(unserved: ReadonlySet<KubeObject>): RoutingOutcome {
    return new RoutingOutcome(this.#config, this.#stores, this.#gateway, unserved);
  }

  /**
   * The Ingresses of the class (the translator's rule, translate-ingress.ts
   * servesClass) as the render was given them, each as stored now, and
   * whether the map model served it.
   */
  classIngresses(): IngressOfClass[] {
    const className = this.#config.ingress.className;
    const ingresses: IngressOfClass[] = [];
    for (const { resource, listed } of this.#ingresses) {
      const store = this.#stores.get(resource.name);
      for (const rendered of listed) {
        if (!servesClass(rendered, className)) continue;
        const ingress = storedNow(rendered, store);
        if (ingress) ingresses.push({ resource, ingress, served: !this.#unserved.has(rendered) });
      }
    }
    return ingresses;
  }
}

/** The object as its store holds it now: the rendered one, or one changed in its status alone; undefined when gone or changed otherwise. */
function storedNow(rendered: KubeObject, store: StoreReader | undefined): KubeObject | undefined {
  const now = store?.get(rendered.metadata.namespace, rendered.metadata.name);
  return now !== undefined && (now === rendered || onlyStatusChanged(rendered, now)) ? now : undefined;
}
