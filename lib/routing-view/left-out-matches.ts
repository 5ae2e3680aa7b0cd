import type { GatewayApiModel } from '../gateway/gateway-api.ts';
import type { LeftOut } from '../gateway/status.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { RouteRecord } from '../routing/route.ts';
import { translateHttpRoute } from '../gateway/translate-http-route.ts';

/**
 * What the view model leaves out of each HTTPRoute as not routed yet, read
 * as the render translates it (translate-http-route.ts), for the route's status:
 * the matches left out, each named by field with why, and whether nothing
 * of the route is served. Routes with nothing left out are not in the map.
 */
export function leftOutMatches(model: GatewayApiModel, kept?: LeftOutCache): Map<KubeObject, LeftOut> {
  const leftOut = new Map<KubeObject, LeftOut>();
  for (const { kind, object, records } of model.routes.values()) {
    if (records.length === 0) continue;
    let found = kept?.get(records);
    if (found === undefined) {
      found = readLeftOut(kind, object, records);
      kept?.set(records, found);
    }
    if (found !== null) leftOut.set(object, found);
  }
  return leftOut;
}

/**
 * Each route's left-out matches by its records: a model read with a memo
 * (lib/gateway/gateway-api.ts GatewayApiMemo) gives an unchanged route the
 * same records, which are then not read again. Null: nothing left out.
 */
export type LeftOutCache = WeakMap<readonly RouteRecord[], LeftOut | null>;

function readLeftOut(kind: string, object: KubeObject, records: readonly RouteRecord[]): LeftOut | null {
  const translated = translateHttpRoute({ kind, object, records });
  return translated.leftOut.length === 0 ? null : { matches: translated.leftOut, all: (translated.served?.routes.length ?? 0) === 0 };
}
