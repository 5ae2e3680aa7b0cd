import { isFields } from '../object-fields/fields.ts';

/**
 * metav1.Condition as Gateway API status carries it, and the rule
 * apimachinery's meta.SetStatusCondition follows
 * (staging/src/k8s.io/apimachinery/pkg/api/meta/conditions.go): a
 * condition's lastTransitionTime moves only when its status changes; its
 * reason, message and observedGeneration are updated in place. So a status
 * recomputed from unchanged objects equals the stored one, and nothing is written.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
}

export type DesiredCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** The longest message a condition may carry (the CRDs' maxLength for message). */
const MAX_MESSAGE = 32_768;

export function desired(type: string, status: boolean | 'Unknown', reason: string, message: string): DesiredCondition {
  const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
  return { type, status: status === 'Unknown' ? 'Unknown' : status ? 'True' : 'False', reason, message: text };
}

/** The conditions to store: `wanted` in its order, each keeping the stored lastTransitionTime when its status did not change. */
export function withTransitions(wanted: readonly DesiredCondition[], stored: unknown, generation: number, now: string): Condition[] {
  const previous = Array.isArray(stored) ? stored.filter(isFields) : [];
  return wanted.map((condition) => {
    const before = previous.find((candidate) => candidate['type'] === condition.type);
    const kept = before !== undefined && before['status'] === condition.status && typeof before['lastTransitionTime'] === 'string';
    return { ...condition, observedGeneration: generation, lastTransitionTime: kept ? (before['lastTransitionTime'] as string) : now };
  });
}

/**
 * RFC 3339 at whole seconds, as metav1.Time is serialised: the API server
 * drops fractions, so a time with milliseconds would never compare equal
 * to the stored one and would be written again and again.
 */
export function conditionTime(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function generationOf(object: { readonly metadata: Readonly<Record<string, unknown>> }): number {
  const generation = object.metadata['generation'];
  return typeof generation === 'number' ? generation : 0;
}
