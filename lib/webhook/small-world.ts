import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { ingressResources, mapModelSources } from '../routing-view/model-sources.ts';
import { createRenderer, type RenderOutput } from '../render/renderer.ts';
import { routingViews } from '../routing-view/routing-view.ts';
import { buildStores } from '../store/build-stores.ts';
import type { IngressNeighbourhood } from './neighbourhood.ts';
import { objectKey } from '../pipeline/object-key.ts';

/** Objects by watched resource name, as a render's stores hold them. */
export type World = ReadonlyMap<string, readonly KubeObject[]>;

function key(object: KubeObject): string {
  return objectKey(object.metadata.namespace, object.metadata.name);
}

/**
 * The proposed object over the live stores, reduced to what decides it:
 * the object itself, the Ingresses it is decided with (see
 * neighbourhood.ts), and the Services, EndpointSlices and Secrets those
 * Ingresses use, read from the live stores, with the proposed object in
 * place of the one stored under its name. Other resources contribute the
 * proposed object alone: the templates' values from it are checked where
 * they land, whatever else the cluster holds.
 */
export function smallWorld(config: ControllerConfig, stores: ReadonlyMap<string, StoreReader>, resource: WatchedResource, proposed: KubeObject, neighbourhood: IngressNeighbourhood): World {
  const roles = ingressResources(config);
  const world = new Map<string, Map<string, KubeObject>>(config.watchedResources.map((watched) => [watched.name, new Map()]));
  const put = (watched: WatchedResource | undefined, object: KubeObject | undefined) => {
    if (watched === undefined || object === undefined) return;
    const objects = world.get(watched.name)!;
    // The proposed object stands in for the stored one of its name.
    if (watched === resource && key(object) === key(proposed)) objects.set(key(proposed), proposed);
    else if (!objects.has(key(object))) objects.set(key(object), object);
  };
  put(resource, proposed);

  const sources = mapModelSources(config, stores);
  if (sources && roles.ingresses) {
    const role = resource === roles.ingresses ? 'ingress' : resource === roles.secrets ? 'secret' : resource === roles.services ? 'service' : undefined;
    const ingresses = role === undefined ? [] : neighbourhood.neighboursOf(proposed, role);
    if (role === 'ingress') ingresses.push(proposed);
    for (const ingress of ingresses) {
      put(roles.ingresses, ingress);
      const served = neighbourhood.read(ingress)?.served;
      if (!served) continue;
      const services = new Set<string>();
      for (const route of served.routes) services.add(route.asked.service);
      if (served.defaultBackend) services.add(served.defaultBackend.asked.service);
      for (const name of services) {
        put(roles.services, sources.service(served.namespace, name));
        for (const slice of sources.endpointSlices(served.namespace, name)) put(roles.slices, slice);
      }
      for (const tls of served.tls) put(roles.secrets, sources.secret(served.namespace, tls.secretName));
    }
  }
  return new Map([...world].map(([name, objects]) => [name, [...objects.values()]]));
}

/** The union of several worlds, for one check of them all; undefined when two hold different objects under one name. */
export function unionOf(worlds: readonly World[]): World | undefined {
  const union = new Map<string, Map<string, KubeObject>>();
  for (const world of worlds) {
    for (const [name, objects] of world) {
      let held = union.get(name);
      if (!held) union.set(name, (held = new Map()));
      for (const object of objects) {
        const existing = held.get(key(object));
        if (existing !== undefined && existing !== object) return undefined;
        held.set(key(object), object);
      }
    }
  }
  return new Map([...union].map(([name, objects]) => [name, [...objects.values()]]));
}

/** Renders worlds into a base directory (the configuration's own when none is given). */
export type WorldRenderer = (world: World, baseDir?: string) => RenderOutput;

/**
 * Renders worlds with the configuration's templates, as the pipeline renders
 * the cluster, through one renderer kept from world to world: its templates
 * are compiled once and what it reuses between renders (held to a fresh
 * renderer's output by spec/lib/render/incremental.spec.ts) serves every
 * review after the first, instead of every review paying for a renderer of
 * its own.
 */
export function worldRenderer(config: ControllerConfig): WorldRenderer {
  const renderer = createRenderer(config, routingViews);
  return (world, baseDir) => renderer({ stores: buildStores(config.watchedResources, world, []), ...(baseDir === undefined ? {} : { baseDir }) });
}

/** Renders one world with a renderer of its own. */
export function renderWorld(config: ControllerConfig, world: World, baseDir?: string): RenderOutput {
  return worldRenderer(config)(world, baseDir);
}
