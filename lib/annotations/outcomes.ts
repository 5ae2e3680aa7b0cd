import type { BackendSettings, RouteSettings } from '../routing/settings.ts';

/**
 * One annotation as read: honoured (it set a setting), ignored (with why),
 * invalid (its object is excluded until the value is fixed), or left out
 * (a valid value asking for what cannot be served here, so its object is
 * excluded rather than served without it: fail closed).
 */
export type AnnotationOutcome =
  | { readonly annotation: string; readonly value: string; readonly status: 'honoured'; readonly setting: string }
  | { readonly annotation: string; readonly value: string; readonly status: 'ignored'; readonly reason: string }
  | { readonly annotation: string; readonly value: string; readonly status: 'invalid'; readonly reason: string }
  | { readonly annotation: string; readonly value: string; readonly status: 'left out'; readonly reason: string };

/** Whether an outcome keeps its object from being served. */
export const excludesObject = (outcome: AnnotationOutcome): outcome is Extract<AnnotationOutcome, { status: 'invalid' | 'left out' }> =>
  outcome.status === 'invalid' || outcome.status === 'left out';

/** What one object's annotations ask for. */
export interface ReadSettings {
  readonly backend: BackendSettings;
  readonly route: RouteSettings;
  /** One per annotation of a known family (haproxy.org/ and its alias haproxy.com/, nginx.ingress.kubernetes.io/), in name order. */
  readonly outcomes: readonly AnnotationOutcome[];
}
