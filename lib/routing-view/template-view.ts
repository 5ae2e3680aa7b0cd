import type { MapModel } from '../map-model/types.ts';
import type { RenderContext } from '../render/template-view.ts';

/**
 * What a template can read: the context every template of a configuration
 * renders with, the renderer's own names, then the routing view's.
 * docs/reference/template-view.md is generated from these declarations and
 * the ones they name, doc comments included (`npm run docs:reference`).
 */
export interface TemplateView extends RenderContext {
  /**
   * The routing view: HTTP routing as HAProxy maps serve it, present when
   * Ingresses, Services and EndpointSlices are watched, with the accepted
   * HTTPRoutes' routes when Gateway API kinds are watched too.
   */
  readonly routes: MapModel | undefined;
  /** `routes` under its old name, for one more release: a template reading it has a deprecation line in the log. */
  readonly ingress: MapModel | undefined;
}
