import type { WatchedResource } from '../config/types.ts';
import type { Problem } from '../pipeline/model.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { EventRecord, EventSubject } from './event-recorder.ts';

export interface OutcomeEventContext {
  /**
   * Where the configuration comes from: the controller ConfigMap and every
   * ConfigMap or Secret a template is taken from. Accepted, rejected and
   * invalid configuration events go to each, so a GitOps user sees them on
   * the object Flux syncs.
   */
  readonly configSources: readonly EventSubject[];
  /** The running configuration's watched resources, to name the API version of an excluded object; empty before one loads. */
  readonly resources: readonly WatchedResource[];
}

const DNS_NAME = '[a-z0-9]([-a-z0-9.]*[a-z0-9])?';
const PROBLEM_OBJECT = new RegExp(`^(\\S+) (?:(${DNS_NAME})/)?(${DNS_NAME})$`);

/** The object a Problem names ("Kind namespace/name", or a watched resource's name for the kind), when it can be resolved. */
export function problemSubject(object: string, resources: readonly WatchedResource[]): EventSubject | undefined {
  const match = PROBLEM_OBJECT.exec(object);
  if (!match) return undefined;
  const [, label, namespace, , name] = match;
  const resource = resources.find((r) => r.kind === label) ?? resources.find((r) => r.name === label);
  if (!resource?.kind || !name) return undefined;
  return { apiVersion: resource.apiVersion, kind: resource.kind, namespace, name };
}

/** An ObjectExcluded event on each object a problem names (that can be resolved to a watched resource). */
function excludedEvents(problems: readonly Problem[], action: 'Render' | 'Validate' | 'Deploy', context: OutcomeEventContext): EventRecord[] {
  return problems.flatMap((problem) => {
    const regarding = problemSubject(problem.object, context.resources);
    return regarding === undefined
      ? []
      : [{ regarding, type: 'Warning' as const, reason: 'ObjectExcluded', action, note: `left out of the HAProxy configuration: ${problem.field}: ${problem.message}` }];
  });
}

/**
 * An ObjectWarning event on each object a warning names: served, but not
 * as it asked (a route lost to an older Ingress, a backend without servers,
 * backend settings another Ingress set).
 */
function warningEvents(problems: readonly Problem[], context: OutcomeEventContext): EventRecord[] {
  return problems.flatMap((problem) => {
    const regarding = problemSubject(problem.object, context.resources);
    return regarding === undefined
      ? []
      : [{ regarding, type: 'Warning' as const, reason: 'ObjectWarning', action: 'Render', note: `served with a warning: ${problem.field}: ${problem.message}` }];
  });
}

function podSubject(endpointId: string): EventSubject | undefined {
  const slash = endpointId.indexOf('/');
  if (slash <= 0 || endpointId.includes('://')) return undefined;
  return { apiVersion: 'v1', kind: 'Pod', namespace: endpointId.slice(0, slash), name: endpointId.slice(slash + 1) };
}

/**
 * The Kubernetes Events an outcome deserves: the configuration's sources
 * hear whether it was accepted, rejected or rendered invalid (with the
 * errors), an object left out of the configuration hears which field and
 * why, an object served other than it asked hears the warning, and a
 * HAProxy pod hears of every failed deployment attempt, not only
 * the last one: a pod that keeps failing is worth knowing about before the
 * retries run out. Retries of one revision failing alike make one note, so
 * they count up one Event's series instead of adding Events. Everything
 * else is for logs and metrics only.
 */
export function outcomeEvents(outcome: Outcome, context: OutcomeEventContext): EventRecord[] {
  switch (outcome.type) {
    case 'configApplied':
      return context.configSources.map((regarding) => ({
        regarding,
        type: 'Normal',
        reason: 'ConfigAccepted',
        action: 'LoadConfiguration',
        note: `configuration accepted (generation ${outcome.generation})`,
      }));
    case 'configRejected':
      return context.configSources.map((regarding) => ({
        regarding,
        type: 'Warning',
        reason: 'ConfigRejected',
        action: 'LoadConfiguration',
        note: `configuration rejected, the running one keeps serving: ${outcome.errors.join('; ')}`,
      }));
    case 'validationFailed':
      return context.configSources.map((regarding) => ({
        regarding,
        type: 'Warning',
        reason: 'ConfigInvalid',
        action: 'Validate',
        note: `rendered configuration failed validation, the running one keeps serving: ${outcome.error}`,
      }));
    case 'rendered':
      return [...excludedEvents(outcome.excluded, 'Render', context), ...warningEvents(outcome.warnings, context)];
    case 'quarantined':
      return excludedEvents(outcome.objects, outcome.by === 'validation' ? 'Validate' : 'Deploy', context);
    case 'deployFailed': {
      const regarding = podSubject(outcome.endpoint);
      const outlook = outcome.final ? `gave up after ${outcome.attempt} attempt${outcome.attempt === 1 ? '' : 's'}` : 'retrying';
      return regarding === undefined
        ? []
        : [{ regarding, type: 'Warning', reason: 'DeployFailed', action: 'Deploy', note: `deploying revision ${outcome.revision} failed, ${outlook}: ${outcome.error}` }];
    }
    default:
      return [];
  }
}
