import type { KubeObject } from '../pipeline/model.ts';
import type { RouteRecord } from '../routing/route.ts';
import type { TranslatedObject } from '../routing/translated.ts';
import { recordsContent, translateHttpRoute, type RoutedObject } from './translate-http-route.ts';

/**
 * The HTTPRoutes' translations kept from one render to the next: a route is
 * translated again only when its records changed, and its translation is
 * then the very same object while their content is, so the map model
 * (which keeps what it made of each translation) looks at it no further.
 */
export class TranslationCache {
  /** Per HTTPRoute, the records it was last given, their content and its translation. */
  readonly #byObject = new WeakMap<KubeObject, { readonly records: readonly RouteRecord[]; readonly content: string; readonly translated: TranslatedObject }>();

  translation(routed: RoutedObject): TranslatedObject {
    const before = this.#byObject.get(routed.object);
    // The same records (a gateway model read with its memo keeps them) need no comparing.
    if (before?.records === routed.records) return before.translated;
    const content = recordsContent(routed.records);
    const translated = before?.content === content ? before.translated : translateHttpRoute(routed);
    this.#byObject.set(routed.object, { records: routed.records, content, translated });
    return translated;
  }
}
