import type { ControllerConfig } from '../config/types.ts';

/**
 * What of a configuration the routing view reads (lib/routing-view/: the
 * watched resources, the Ingress class and host sharing, the Gateway API
 * settings) and what shapes the objects and files it works on (ignored
 * fields, directories), as a string. Two configurations with the same
 * string get the same routing view, so the one's view, with its per-object
 * caches, serves the other's renderer (see kept-views.ts). The templates,
 * their values and the pipeline's timings play no part in it: an edit of
 * those keeps the caches.
 */
export function cacheInputs(config: ControllerConfig): string {
  const { ingress, gatewayApi, dataplane, watchedResources, ignoreFields } = config;
  return JSON.stringify({
    ingress,
    gatewayApi,
    dirs: [dataplane.baseDir, dataplane.mapsDir, dataplane.certificatesDir, dataplane.generalDir],
    watchedResources: watchedResources.map((resource) => ({
      ...resource,
      fieldSelector: resource.fieldSelector.map(({ path, operator, value }) => [path.source, operator, value]),
      indexBy: resource.indexBy.map((path) => path.source),
      relations: resource.relations.map(({ name, resource: target, keys }) => [name, target, keys.map((key) => key.source)]),
    })),
    ignoreFields: ignoreFields.map((path) => path.source),
  });
}
