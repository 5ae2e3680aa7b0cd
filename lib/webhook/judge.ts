import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import { describeObject } from '../object-fields/names.ts';
import { contentHash } from '../pipeline/content-hash.ts';
import type { KubeObject, Problem, StoreReader } from '../pipeline/model.ts';
import { ingressResources } from '../routing-view/model-sources.ts';
import { objectLabel } from '../render/resource-views.ts';
import type { IngressNeighbourhood } from './neighbourhood.ts';
import { smallWorld, worldRenderer, type World, type WorldRenderer } from './small-world.ts';

/**
 * The webhook's decision on a proposed object is the pipeline's own: the
 * object is rendered over the live stores (see small-world.ts) by the
 * configuration's renderer, and whatever that render leaves out of the
 * object (a field the view model refuses, a value its template line cannot
 * take, a host another namespace holds...) is the reason to deny it, named
 * by field. Nothing here checks a field itself: a check added to the view
 * model or the writer denies admission the day it is added.
 */

export interface Contribution {
  /** The object and what it is decided with: the configuration made for it renders from this. */
  readonly world: World;
  /** Content hash of that configuration: one verdict of `haproxy -c` per hash. */
  readonly hash: string;
}

export interface Judgement {
  /** `field: reason` for each part of the object the render leaves out; empty to admit. */
  readonly denials: readonly string[];
  /** What it is served with otherwise than it asks (a route an older Ingress holds, a Secret not found or refused). */
  readonly warnings: readonly string[];
  /** The configuration to check with `haproxy -c` when nothing is denied. */
  readonly contribution: Contribution | undefined;
}

const describe = (problem: Problem) => `${problem.field}: ${problem.message}`;

export function judge(
  config: ControllerConfig,
  stores: ReadonlyMap<string, StoreReader>,
  resource: WatchedResource,
  object: KubeObject,
  neighbourhood: IngressNeighbourhood,
  render: WorldRenderer = worldRenderer(config),
): Judgement {
  const { namespace, name } = object.metadata;
  // The view model names objects with describeObject, the template writer with objectLabel.
  const labels = new Set([describeObject(resource.kind ?? String(object.kind), namespace, name), objectLabel(resource.kind ?? resource.resource, object)]);
  const world = smallWorld(config, stores, resource, object, neighbourhood);
  const output = render(world);
  const own = (problems: readonly Problem[]) => problems.filter((problem) => labels.has(problem.object));
  const denials = own(output.excluded).map(describe);
  const warnings = [...own(output.warnings).map(describe), ...usedSecretProblems(config, resource, object, neighbourhood, output.excluded)];
  return { denials, warnings, contribution: denials.length > 0 ? undefined : { world, hash: contentHash(output.files) } };
}

/**
 * A TLS Secret the Ingress names that the render leaves out: the Secret's
 * fault, not the Ingress's, so a warning on the field naming it.
 */
function usedSecretProblems(config: ControllerConfig, resource: WatchedResource, ingress: KubeObject, neighbourhood: IngressNeighbourhood, excluded: readonly Problem[]): string[] {
  if (resource !== ingressResources(config).ingresses) return [];
  const served = neighbourhood.read(ingress)?.served;
  if (!served) return [];
  return served.tls.flatMap((tls) => {
    const secret = describeObject('Secret', served.namespace, tls.secretName);
    return excluded.filter((problem) => problem.object === secret).map((problem) => `${tls.field}: ${secret} ${describe(problem)}`);
  });
}
