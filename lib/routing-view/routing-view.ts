import { buildMapModel, MapModelCache } from '../map-model/build-model.ts';
import type { RendererViews, ViewProvider } from '../render/views.ts';
import { routingSources, RouteSourcesCache } from './model-sources.ts';
import type { TemplateView } from './template-view.ts';

/**
 * The routing view over the stores: the translated Ingresses and accepted
 * Gateway API routes as the HAProxy map model (its layer-4 part for
 * TLSRoutes and TCPRoutes), with the certificates and CA files it names,
 * and what it left out; its outcome is what the translation made of the
 * objects, for the status side streams (routing-outcome.ts). Each
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
    // The layer-4 frontends' certificates beside the HTTP ones; a file both name has one content (certificate-file.ts names a file by its Secret).
    const certificates = model.l4.certificates.length === 0 ? model.certificates : [...model.certificates, ...model.l4.certificates];
    return { value: model, certificates, generalFiles: model.caCertificates, excluded: model.excluded, warnings: model.warnings, outcome: outcome.servedAs(models.unserved) };
  };
};

/** The views the shipped templates read: the routing view as `routes`, and as `ingress`, its old name, for one more release. */
export const routingViews: RendererViews = { views: { routes: routingView }, deprecatedNames: { ingress: 'routes' } };
