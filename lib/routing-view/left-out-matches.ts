import type { RouteOutcome } from '../gateway/gateway-api.ts';
import type { LeftOut } from '../gateway/status.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { TranslatedObject } from '../routing/translated.ts';

/**
 * What the translation left out of each route (HTTPRoute, GRPCRoute) as
 * not routed yet (translate-http-route.ts), for the route's status: the
 * matches left out, each named by field with why, and whether nothing of
 * the route is served. Read from the translations made for the render,
 * never made again; keyed by each route as its outcome holds it (a
 * translation kept from an earlier version of the route names that
 * version). Routes with nothing left out are not in the map.
 */
export function leftOutMatches(routes: {
  readonly outcomes: readonly RouteOutcome[];
  /** Per outcome, at the same place: its translation, none without records. */
  readonly translated: readonly (TranslatedObject | undefined)[];
}): Map<KubeObject, LeftOut> {
  const leftOut = new Map<KubeObject, LeftOut>();
  routes.translated.forEach((translated, at) => {
    if (translated === undefined || translated.leftOut.length === 0) return;
    leftOut.set(routes.outcomes[at]!.object, { matches: translated.leftOut, all: (translated.served?.routes.length ?? 0) === 0 });
  });
  return leftOut;
}
