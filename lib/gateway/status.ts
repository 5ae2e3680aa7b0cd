import { isFields } from '../object-fields/fields.ts';
import { leftOutMessage, type LeftOutMatch } from '../routing/translated.ts';
import type { LoadBalancerIngress } from '../kube/ingress-status.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { desired, generationOf, withTransitions, type DesiredCondition } from './conditions.ts';
import type { GatewayClassRead } from './gateway-class.ts';
import { SUPPORTED_FEATURES } from './features.ts';
import type { GatewayOutcome, RouteOutcome } from './gateway-api.ts';
import type { ListenerState } from './listeners.ts';

/**
 * The status each Gateway API object of this controller should have
 * (conditions as apis/v1 names them), computed from the model alone, so
 * it is tested without a cluster and written only where it differs.
 */

type Status = Readonly<Record<string, unknown>>;

function storedStatus(object: KubeObject): Readonly<Record<string, unknown>> {
  return isFields(object['status']) ? object['status'] : {};
}

/** GatewayClass `status.supportedFeatures`: the features the translated conformance scenarios prove (features.ts), sorted by name. */
const SUPPORTED = Object.freeze(SUPPORTED_FEATURES.map((name) => Object.freeze({ name })));

export function gatewayClassStatus(object: KubeObject, read: GatewayClassRead, now: string): Status {
  const accepted = read.refusal ? desired('Accepted', false, read.refusal.reason, read.refusal.message) : desired('Accepted', true, 'Accepted', 'served by haproxy-template-ic');
  return { ...storedStatus(object), conditions: withTransitions([accepted], storedStatus(object)['conditions'], generationOf(object), now), supportedFeatures: SUPPORTED };
}

/**
 * What the deployment tells a Gateway: whether the configuration holding
 * its listeners is live on the HAProxy fleet ('deployed'), not yet
 * ('pending'), or refused by validation or every instance ('failed').
 */
export type Deployment = 'deployed' | 'pending' | 'failed';

/** Programmed for what is served, as the deployment of the configuration serving it went. */
function programmedBy(deployment: Deployment): DesiredCondition {
  if (deployment === 'deployed') return desired('Programmed', true, 'Programmed', 'served by the HAProxy fleet');
  const why = deployment === 'failed' ? 'the configuration serving it was not deployed; the last good one is still served' : 'waiting for deployment';
  return desired('Programmed', false, 'Pending', why);
}

function listenerConditions(state: ListenerState, deployment: Deployment): DesiredCondition[] {
  const refused = state.faults.find((fault) => fault.condition === 'Accepted');
  const unresolved = state.faults.find((fault) => fault.condition === 'ResolvedRefs');
  const accepted = refused ? desired('Accepted', false, refused.reason, refused.message) : desired('Accepted', true, 'Accepted', 'listener accepted');
  const resolved = unresolved ? desired('ResolvedRefs', false, unresolved.reason, unresolved.message) : desired('ResolvedRefs', true, 'ResolvedRefs', 'all references resolved');
  const conflicted = state.conflict ? desired('Conflicted', true, state.conflict.reason, state.conflict.message) : desired('Conflicted', false, 'NoConflicts', 'no conflicts');
  const programmed = state.serving ? programmedBy(deployment) : desired('Programmed', false, 'Invalid', 'the listener is not served: see its other conditions');
  return [accepted, resolved, conflicted, programmed];
}

export function gatewayStatus(outcome: GatewayOutcome, addresses: readonly LoadBalancerIngress[], deployment: Deployment, now: string): Status {
  const { object, served } = outcome;
  const stored = storedStatus(object);
  const generation = generationOf(object);
  const statusAddresses = addresses.map((address) => (address.ip ? { type: 'IPAddress', value: address.ip } : { type: 'Hostname', value: address.hostname ?? '' }));
  const problems = outcome.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
  const storedListeners = Array.isArray(stored['listeners']) ? stored['listeners'].filter(isFields) : [];
  const listeners = (served?.listeners ?? []).map((state) => ({
    name: state.listener.name,
    supportedKinds: state.listener.kinds.map(({ group, kind }) => ({ group, kind })),
    attachedRoutes: outcome.attachedRoutes.get(state.listener.name) ?? 0,
    conditions: withTransitions(listenerConditions(state, deployment), storedListeners.find((entry) => entry['name'] === state.listener.name)?.['conditions'], generation, now),
  }));
  const invalid = served?.listeners.filter((state) => !state.serving).length ?? 0;
  let accepted: DesiredCondition;
  if (served === undefined) accepted = desired('Accepted', false, 'Invalid', problems || 'the Gateway cannot be served');
  else if (served.gateway.asksAddresses)
    accepted = desired('Accepted', false, 'UnsupportedAddress', 'spec.addresses: the Gateway takes the addresses of the HAProxy Service; remove spec.addresses');
  else if (invalid === served.listeners.length) accepted = desired('Accepted', false, 'ListenersNotValid', 'no listener can be served');
  else if (invalid > 0) accepted = desired('Accepted', true, 'ListenersNotValid', `${invalid} of ${served.listeners.length} listeners cannot be served`);
  else accepted = desired('Accepted', true, 'Accepted', 'accepted');
  let programmed: DesiredCondition;
  if (accepted.status !== 'True') programmed = desired('Programmed', false, 'Invalid', 'the Gateway is not accepted');
  else if (statusAddresses.length === 0) programmed = desired('Programmed', false, 'AddressNotAssigned', 'the HAProxy Service has no address to publish yet');
  else programmed = programmedBy(deployment);
  return {
    ...stored,
    addresses: statusAddresses,
    // InsecureFrontendValidationMode is there while some listener's client certificate validation falls back, and gone after.
    conditions: withTransitions(
      served?.gateway.insecureFallback
        ? [
            accepted,
            programmed,
            desired('InsecureFrontendValidationMode', true, 'ConfigurationChanged', 'client certificate validation is AllowInsecureFallback: a client without a valid certificate is served'),
          ]
        : [accepted, programmed],
      stored['conditions'],
      generation,
      now,
    ),
    listeners,
  };
}

/**
 * What the routing model left out of an HTTPRoute as not routed yet (a
 * match it does not serve, named by field with why), and whether that is
 * all of it: nothing of the route is served then.
 */
export interface LeftOut {
  /** One per record: a match served for several hosts is named once per host. */
  readonly matches: readonly LeftOutMatch[];
  readonly all: boolean;
}

export const NOTHING_LEFT_OUT: LeftOut = Object.freeze({ matches: Object.freeze([]), all: false });

/**
 * Accepted, and PartiallyInvalid where matches are left out, as
 * apis/v1/shared_types.go words them for the "Drop Rule(s)" approach: a
 * route with something served is Accepted, and PartiallyInvalid=True
 * (UnsupportedValue) with a message starting "Dropped Rule" names what is
 * dropped; a route with nothing served is not accepted (UnsupportedValue)
 * and carries no PartiallyInvalid, which is never set for a route fully
 * invalid or not accepted, and only ever True.
 */
function acceptedConditions(acceptance: RouteOutcome['parents'][number]['acceptance'], leftOut: LeftOut): DesiredCondition[] {
  if (!acceptance.accepted) return [desired('Accepted', false, acceptance.reason, acceptance.message)];
  if (leftOut.matches.length === 0) return [desired('Accepted', true, 'Accepted', 'accepted')];
  const dropped = `Dropped Rule(s): ${[...new Set(leftOut.matches.map((match) => `${match.field}: ${leftOutMessage(match)}`))].join('; ')}`;
  if (leftOut.all) return [desired('Accepted', false, 'UnsupportedValue', `no rule can be served: ${dropped}`)];
  return [desired('Accepted', true, 'Accepted', 'accepted'), desired('PartiallyInvalid', true, 'UnsupportedValue', dropped)];
}

/**
 * One entry per parentRef to a served Gateway; entries other controllers
 * wrote (another controllerName) are kept as they are, since status.parents
 * is shared by every controller a route names.
 */
export function routeStatus(outcome: Pick<RouteOutcome, 'object' | 'parents' | 'unresolved'>, controllerName: string, now: string, leftOut: LeftOut = NOTHING_LEFT_OUT): Status {
  const { object } = outcome;
  const stored = storedStatus(object);
  const generation = generationOf(object);
  const storedParents = Array.isArray(stored['parents']) ? stored['parents'].filter(isFields) : [];
  const others = storedParents.filter((entry) => entry['controllerName'] !== controllerName);
  const first = outcome.unresolved[0];
  const resolved = first
    ? desired('ResolvedRefs', false, first.reason, outcome.unresolved.map((fault) => fault.message).join('; '))
    : desired('ResolvedRefs', true, 'ResolvedRefs', 'all references resolved');
  const ours = outcome.parents.map(({ parent, acceptance }) => {
    const [accepted, ...partially] = acceptedConditions(acceptance, leftOut);
    const previous = storedParents.find((entry) => entry['controllerName'] === controllerName && sameParentRef(entry['parentRef'], parent.written));
    return { parentRef: parent.written, controllerName, conditions: withTransitions([accepted!, resolved, ...partially], previous?.['conditions'], generation, now) };
  });
  return { ...stored, parents: [...others, ...ours] };
}

function sameParentRef(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
