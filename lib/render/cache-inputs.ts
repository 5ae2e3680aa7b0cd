import type { ControllerConfig } from '../config/types.ts';

/**
 * What of a configuration a renderer's caches (RendererCaches in
 * renderer.ts: the Ingress view model's and the Gateway API routes', kept
 * per object) depend on, as a string. Two configurations with the same
 * string read the stores the same way (the same watched resources, Ingress
 * class, host sharing, Gateway API settings and directories), so the caches
 * of the one's renderer hold for the other's. The templates, their values
 * and the pipeline's timings play no part in them: an edit of those keeps
 * the caches.
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
