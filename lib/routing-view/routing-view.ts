import { buildMapModel, MapModelCache } from '../map-model/build-model.ts';
import type { RendererViews, ViewProvider } from '../render/views.ts';
import { routingSources, RouteSourcesCache } from './model-sources.ts';
import type { TemplateView } from './template-view.ts';

/**
 * The routing view over the stores: the translated Ingresses and accepted
 * HTTPRoutes as the HAProxy map model, with the certificates and CA files
 * it names, and what it left out; its outcome is what the translation made
 * of the objects, for the status side streams (routing-outcome.ts). Each
 * renderer's view keeps its own caches, so a render after one change
 * translates and settles only what that change touched.
 */
export const routingView: ViewProvider<TemplateView['routes']> = (config) => {
  const routeSources = new RouteSourcesCache();
  const models = new MapModelCache();
  return (stores) => {
    const { sources, outcome } = routingSources(config, stores, routeSources);
    if (sources === undefined) return { value: undefined, outcome };
    const model = buildMapModel(sources, models);
    return { value: model, certificates: model.certificates, generalFiles: model.caCertificates, excluded: model.excluded, warnings: model.warnings, outcome };
  };
};

/** The views the shipped templates read: the routing view as `routes`, and as `ingress`, its old name, for one more release. */
export const routingViews: RendererViews = { views: { routes: routingView }, deprecatedNames: { ingress: 'routes' } };
