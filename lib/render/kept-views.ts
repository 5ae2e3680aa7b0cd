import type { ControllerConfig } from '../config/types.ts';
import type { RendererViews, ViewProvider } from './views.ts';

/**
 * The views for a run of controller configurations, one renderer each: a
 * renderer whose configuration has the same `inputsOf` as the last one's is
 * given the last one's views, with what they keep between renders (their
 * per-object caches), instead of views made anew. `inputsOf` must say
 * everything of the configuration the views read (cache-inputs.ts does for
 * the routing view), so a view made from the last configuration is the one
 * the next would have made, only warm.
 */
export function keptViews(views: RendererViews, inputsOf: (config: ControllerConfig) => string): RendererViews {
  const kept = (provider: ViewProvider): ViewProvider => {
    let last: { readonly inputs: string; readonly view: ReturnType<ViewProvider> } | undefined;
    return (config) => {
      const inputs = inputsOf(config);
      if (last?.inputs !== inputs) last = { inputs, view: provider(config) };
      return last.view;
    };
  };
  return { ...views, views: Object.fromEntries(Object.entries(views.views).map(([name, provider]) => [name, kept(provider)])) };
}
