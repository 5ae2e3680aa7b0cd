import type { BackendRef, ChoiceShare } from './claim-types.ts';
import type { RoutePolicy } from './route-policies.ts';

/**
 * A choice between the backendRefs of a rule when some have filters of
 * their own (docs/adr/0014-backend-ref-filters.md). HAProxy runs a
 * backend's http-request rules before it picks a server, so filters for one
 * backendRef's requests alone cannot run in a split backend: the frontend
 * picks the backendRef first, runs its policy (its rule's filters, then its
 * own), and sends the request to its Service port's backend.
 *
 * The choice is the path map value `~<total>~<bound>@<backend>[:<policy>]~...`
 * (each bound the share's weight plus those before it): the frontend takes
 * the first share whose bound is above a roll below the total, made from
 * the choice's request count so that every `total` requests meet each share
 * exactly its weight's times. The weights are in the map value, so a weight
 * change is a map change, no reload. No backend name or policy key holds
 * `~`, `@` or `=` (candidate lists cut their values at `=`), and the value
 * is one safe word.
 */

/** A backend a route sends requests to, and the policy they get on their way. */
export interface BackendUse {
  readonly backend: BackendRef;
  readonly policy: RoutePolicy | undefined;
}

/**
 * The `~` fields of a choice the frontend looks at, one per share: a rule
 * has at most 16 backendRefs (HTTPRouteRule.backendRefs MaxItems), and the
 * shares start at the third field.
 */
export const CHOICE_FIELDS: readonly number[] = Object.freeze(Array.from({ length: 16 }, (_, index) => index + 3));

/** A map value is written as one safe word (lib/escape.ts), of at most 1024 characters. */
const LONGEST_CHOICE = 1024;

/**
 * The backend of a choice between `shares`, or why it cannot be served.
 * `namespace`, `route` and `rule` name it in messages.
 */
export function backendChoice(namespace: string, route: string, rule: number, shares: readonly ChoiceShare[]): BackendRef | { readonly reason: string } {
  let bound = 0;
  const parts = shares.map(({ backend, weight, policy }) => {
    bound += weight;
    return `~${bound}@${backend.name}${policy ? `:${policy.key}` : ''}`;
  });
  const name = `~${bound}${parts.join('')}`;
  if (name.length > LONGEST_CHOICE) return { reason: `backendRefs with filters of their own whose choice takes ${name.length} characters (a map value takes ${LONGEST_CHOICE})` };
  return { name, namespace, service: route, port: { number: rule }, choice: Object.freeze(shares) };
}

/** The backends a route's requests go to, with their policies: its own, or each of its choice's. */
export function backendUses(route: BackendUse): readonly BackendUse[] {
  return route.backend.choice ?? [route];
}
