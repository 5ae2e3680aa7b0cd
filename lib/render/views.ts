import type { ControllerConfig } from '../config/types.ts';
import type { Problem, StoreReader } from '../pipeline/model.ts';

/** A PEM file a view brings beside the templates' own files. */
export interface PemFile {
  readonly file: string;
  readonly pem: string;
}

/** What a view gives one render pass. */
export interface ProvidedView<Value = unknown> {
  /** What templates read under the view's name. */
  readonly value: Value;
  /** Files for the certificates directory: a template's file of the same name is kept instead. */
  readonly certificates?: readonly PemFile[];
  /** Files for the general files directory: a template's file of the same name is kept instead. */
  readonly generalFiles?: readonly PemFile[];
  /** Objects, or parts of them, the view left out, each with the field at fault: they are the render's too. */
  readonly excluded?: readonly Problem[];
  /** What the view serves other than the object asks: the render's warnings. */
  readonly warnings?: readonly Problem[];
  /** What the view's translation made of the objects, for the side streams (status): the render hands it over unread (RenderOutput.outcomes). */
  readonly outcome?: object;
}

/**
 * A view of the stores that templates read under a name. It is made once
 * per renderer, from the configuration, so what it keeps between renders
 * (its caches) is that renderer's alone; each render pass then gives it the
 * stores that pass sees (objects the pass excluded hidden).
 */
export type ViewProvider<Value = unknown> = (config: ControllerConfig) => (stores: ReadonlyMap<string, StoreReader>) => ProvidedView<Value>;

/** The views a renderer is given: what templates read beyond the renderer's own names (see RenderContext). */
export interface RendererViews {
  /** Each view by the name templates read it under. */
  readonly views: Readonly<Record<string, ViewProvider>>;
  /**
   * Old names of views, each to the view's name, kept for one release: a
   * template reading an old name reads that view, and the renderer's output
   * says so once per template (RenderOutput.deprecations).
   */
  readonly deprecatedNames?: Readonly<Record<string, string>>;
}
