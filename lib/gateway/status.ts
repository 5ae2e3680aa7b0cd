import { isFields } from '../object-fields/fields.ts';
import { leftOutMessage, type LeftOutMatch } from '../routing/translated.ts';
import type { LoadBalancerIngress } from '../kube/ingress-status.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { desired, generationOf, withTransitions, type DesiredCondition } from './conditions.ts';
import type { GatewayClassRead } from './gateway-class.ts';
import { SUPPORTED_FEATURES } from './features.ts';
import type { GatewayOutcome, RouteOutcome } from './gateway-api.ts';
import type { ListenerState } from './listeners.ts';
import { gatewayAncestorRef, type BackendTlsPolicyOutcome } from './backend-tls-policy.ts';

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

/**
 * A listener's conditions. A conflicted listener is not accepted nor
 * programmed, for its conflict's reason, as the conformance suite asks
 * (tlsroute-listener-mixed-termination-not-supported, listenerset-hostname-conflict).
 */
function listenerConditions(state: ListenerState, deployment: Deployment): DesiredCondition[] {
  const refused = state.faults.find((fault) => fault.condition === 'Accepted') ?? state.conflict;
  const unresolved = state.faults.find((fault) => fault.condition === 'ResolvedRefs');
  const accepted = refused ? desired('Accepted', false, refused.reason, refused.message) : desired('Accepted', true, 'Accepted', 'listener accepted');
  const resolved = unresolved ? desired('ResolvedRefs', false, unresolved.reason, unresolved.message) : desired('ResolvedRefs', true, 'ResolvedRefs', 'all references resolved');
  const conflicted = state.conflict ? desired('Conflicted', true, state.conflict.reason, state.conflict.message) : desired('Conflicted', false, 'NoConflicts', 'no conflicts');
  let programmed: DesiredCondition;
  if (state.serving) programmed = programmedBy(deployment);
  else if (state.conflict) programmed = desired('Programmed', false, state.conflict.reason, state.conflict.message);
  else programmed = desired('Programmed', false, 'Invalid', 'the listener is not served: see its other conditions');
  return [accepted, resolved, conflicted, programmed];
}

/** The status.listeners entries of a Gateway's or ListenerSet's served listeners (apis/v1 ListenerStatus and ListenerEntryStatus alike). */
function listenerStatuses(outcome: GatewayOutcome, stored: Readonly<Record<string, unknown>>, deployment: Deployment, now: string) {
  const storedListeners = Array.isArray(stored['listeners']) ? stored['listeners'].filter(isFields) : [];
  return (outcome.served?.listeners ?? []).map((state) => ({
    name: state.listener.name,
    supportedKinds: state.listener.kinds.map(({ group, kind }) => ({ group, kind })),
    attachedRoutes: outcome.attachedRoutes.get(state.listener.name) ?? 0,
    conditions: withTransitions(
      listenerConditions(state, deployment),
      storedListeners.find((entry) => entry['name'] === state.listener.name)?.['conditions'],
      generationOf(outcome.object),
      now,
    ),
  }));
}

/**
 * A ListenerSet's status (apis/v1/listenerset_types.go ListenerSetStatus):
 * refused by its Gateway (NotAllowed, ParentNotAccepted) with both
 * conditions false for that reason; with no listener served,
 * ListenersNotValid; else Accepted, and Programmed as its Gateway's
 * listeners are.
 */
export function listenerSetStatus(outcome: GatewayOutcome, addresses: readonly LoadBalancerIngress[], deployment: Deployment, now: string): Status {
  const { object, served } = outcome;
  const stored = storedStatus(object);
  const refusal = outcome.listenerSet?.refusal;
  const invalid = served?.listeners.filter((state) => !state.serving).length ?? 0;
  let accepted: DesiredCondition;
  let programmed: DesiredCondition | undefined;
  if (refusal) {
    accepted = desired('Accepted', false, refusal.reason, refusal.message);
    programmed = desired('Programmed', false, refusal.reason, refusal.message);
  } else if (served === undefined) {
    const problems = outcome.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
    accepted = desired('Accepted', false, 'Invalid', problems || 'the ListenerSet cannot be served');
    programmed = desired('Programmed', false, 'Invalid', accepted.message);
  } else if (invalid === served.listeners.length) {
    accepted = desired('Accepted', false, 'ListenersNotValid', 'no listener can be served');
    programmed = desired('Programmed', false, 'ListenersNotValid', accepted.message);
  } else {
    accepted =
      invalid > 0 ? desired('Accepted', true, 'ListenersNotValid', `${invalid} of ${served.listeners.length} listeners cannot be served`) : desired('Accepted', true, 'Accepted', 'accepted');
  }
  programmed ??= addresses.length === 0 ? desired('Programmed', false, 'ParentNotProgrammed', 'the HAProxy Service has no address to publish yet') : programmedBy(deployment);
  return {
    ...stored,
    conditions: withTransitions([accepted, programmed], stored['conditions'], generationOf(object), now),
    listeners: listenerStatuses(outcome, stored, deployment, now),
  };
}

export function gatewayStatus(outcome: GatewayOutcome, addresses: readonly LoadBalancerIngress[], deployment: Deployment, now: string): Status {
  const { object, served } = outcome;
  const stored = storedStatus(object);
  const generation = generationOf(object);
  const statusAddresses = addresses.map((address) => (address.ip ? { type: 'IPAddress', value: address.ip } : { type: 'Hostname', value: address.hostname ?? '' }));
  const problems = outcome.problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
  const listeners = listenerStatuses(outcome, stored, deployment, now);
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
  // attachedListenerSets is optional, absent read as 0 (conformance GatewayMustHaveAttachedListeners): written while some are, gone after.
  const { attachedListenerSets: _, ...kept } = stored;
  return {
    ...kept,
    ...(outcome.attachedListenerSets ? { attachedListenerSets: outcome.attachedListenerSets } : {}),
    addresses: statusAddresses,
    // InsecureFrontendValidationMode is there while some listener's client certificate validation falls back, and gone after.
    conditions: withTransitions(
      (outcome.insecureFallback ?? served?.gateway.insecureFallback)
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

/**
 * A BackendTLSPolicy's status (PolicyStatus): one entry per Gateway a
 * route through it attaches to (ancestorRef: the Gateway), each with the
 * policy's conditions; entries of other controllers kept as they are.
 * Undefined when there is nothing of this controller's to write or remove.
 */
export function backendTlsPolicyStatus(
  outcome: BackendTlsPolicyOutcome,
  gateways: readonly { readonly namespace: string; readonly name: string }[],
  controllerName: string,
  now: string,
): Status | undefined {
  const stored = storedStatus(outcome.object);
  const storedAncestors = Array.isArray(stored['ancestors']) ? stored['ancestors'].filter(isFields) : [];
  const others = storedAncestors.filter((entry) => entry['controllerName'] !== controllerName);
  if (gateways.length === 0 && others.length === storedAncestors.length) return undefined;
  const generation = generationOf(outcome.object);
  const ours = gateways.map(({ namespace, name }) => {
    const ancestorRef = gatewayAncestorRef(namespace, name);
    const previous = storedAncestors.find((entry) => entry['controllerName'] === controllerName && sameParentRef(entry['ancestorRef'], ancestorRef));
    return { ancestorRef, controllerName, conditions: withTransitions(outcome.conditions, previous?.['conditions'], generation, now) };
  });
  return { ...stored, ancestors: [...others, ...ours] };
}
