import { availableParallelism } from 'node:os';
import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import { servesClass } from '../ingress/translate-ingress.ts';
import { normaliseObject } from '../kube/normalise.ts';
import { selectionFor, withoutIgnoredFields } from '../kube/select.ts';
import type { KubeObject, StoreReader } from '../pipeline/model.ts';
import { ingressResources } from '../routing-view/model-sources.ts';
import { admissionResponse, readAdmissionReview, type AdmissionRequest, type AdmissionVerdict, type Operation } from './admission-review.ts';
import { ContributionChecker, type CheckedContribution } from './contribution-checker.ts';
import { checkSmallConfiguration } from './haproxy-check.ts';
import { judge, type Judgement } from './judge.ts';
import { IngressNeighbourhood } from './neighbourhood.ts';
import { worldRenderer, type WorldRenderer } from './small-world.ts';

/**
 * Answers AdmissionReviews: finds which watched resource a request is for,
 * leaves alone what the controller would not serve (another class, objects
 * outside the resource's selectors, subresources, deletions), judges the
 * rest on its small world (judge.ts) and checks the configuration made for
 * it with `haproxy -c` (contribution-checker.ts). What cannot be judged
 * (the pipeline not synced yet, a configuration that does not render,
 * `haproxy -c` unable to run or too slow) is answered with an error, so the
 * API server applies the webhook's failurePolicy rather than a verdict.
 */

/** The configuration in force and the live stores the pipeline renders from. */
export interface AdmissionState {
  readonly config: ControllerConfig;
  readonly stores: ReadonlyMap<string, StoreReader>;
}

export type AdmissionResult = 'allowed' | 'denied' | 'skipped' | 'error';

/** One review, for the logs, metrics and the span. */
export interface AdmissionRecord {
  readonly uid: string;
  /** The resource's plural name (`ingresses`), or `unknown` for a request that could not be read. */
  readonly resource: string;
  readonly operation: Operation | undefined;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly result: AdmissionResult;
  /** The denial's message, why it was left alone, or the error. */
  readonly reason: string | undefined;
  readonly warnings: readonly string[];
  /** Whether `haproxy -c` ran for it, or a verdict kept from an earlier run answered. */
  readonly check: 'ran' | 'cached' | 'none';
}

export interface AdmissionReply {
  readonly status: number;
  readonly body: unknown;
  readonly record: AdmissionRecord;
}

export interface AdmissionHandlerOptions {
  readonly state: () => AdmissionState | undefined;
  /** Runs of `haproxy -c` at once; default half the CPUs available (the controller needs the rest), from 1 to 4. */
  readonly checkConcurrency?: number;
  readonly haproxyBinary?: string;
  readonly tmpRoot?: string;
}

/** What `haproxy -c` needs to be given up for: the API server's own deadline, less time to answer. */
const answerMarginMs = 250;

interface ConfigState {
  readonly config: ControllerConfig;
  readonly neighbourhood: IngressNeighbourhood;
  /** Renders the reviewed objects' worlds to judge them; kept across reviews (see worldRenderer). */
  readonly render: WorldRenderer;
  readonly checker: ContributionChecker;
}

function status(code: number, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: code === 400 ? 'BadRequest' : 'ServiceUnavailable', code };
}

/** The watched resource a request is for, when the configuration marks it for the webhook. */
function resourceFor(config: ControllerConfig, request: AdmissionRequest): WatchedResource | undefined {
  const { group, version, resource } = request.resource;
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return config.watchedResources.find((watched) => watched.validationWebhook && watched.apiVersion === apiVersion && watched.resource === resource);
}

export class AdmissionHandler {
  readonly #options: AdmissionHandlerOptions;
  #state: ConfigState | undefined;

  constructor(options: AdmissionHandlerOptions) {
    this.#options = options;
  }

  /** Answers one AdmissionReview body (parsed JSON) by `deadline` (milliseconds since the epoch). */
  async review(body: unknown, deadline: number): Promise<AdmissionReply> {
    const read = readAdmissionReview(body);
    if (!read.ok) {
      const record: AdmissionRecord = {
        uid: '',
        resource: 'unknown',
        operation: undefined,
        namespace: undefined,
        name: '',
        result: 'error',
        reason: read.reason,
        warnings: [],
        check: 'none',
      };
      return { status: 400, body: status(400, read.reason), record };
    }
    const request = read.request;
    const base = { uid: request.uid, resource: request.resource.resource, operation: request.operation, namespace: request.namespace, name: request.name };
    const answer = (result: AdmissionResult, verdict: AdmissionVerdict, reason: string | undefined, check: AdmissionRecord['check'] = 'none'): AdmissionReply => ({
      status: 200,
      body: admissionResponse(request.uid, verdict),
      record: { ...base, result, reason, warnings: verdict.warnings ?? [], check },
    });
    const failed = (reason: string): AdmissionReply => ({ status: 503, body: status(503, reason), record: { ...base, result: 'error', reason, warnings: [], check: 'none' } });

    if (request.subResource !== '' || (request.operation !== 'CREATE' && request.operation !== 'UPDATE') || request.object === undefined) {
      return answer('skipped', { allowed: true }, `not judged: ${request.operation}${request.subResource === '' ? '' : ` of ${request.subResource}`}`);
    }
    const live = this.#options.state();
    if (live === undefined) return failed('not ready: the controller has not read its configuration and resources yet');
    const resource = resourceFor(live.config, request);
    if (resource === undefined) return answer('skipped', { allowed: true }, `not judged: the configuration does not mark ${request.resource.resource} for the webhook`);
    if (!live.stores.has(resource.name)) return failed(`not ready: ${resource.name} are not listed yet`);

    const object = this.#proposed(live.config, resource, request);
    if (!selectionFor(resource)(object)) return answer('skipped', { allowed: true }, `not judged: outside watchedResources.${resource.name}`);
    const roles = ingressResources(live.config);
    if (resource === roles.ingresses && !servesClass(object, live.config.ingress.className)) {
      return answer('skipped', { allowed: true }, `not judged: not of class ${live.config.ingress.className}`);
    }

    const state = this.#stateFor(live.config);
    const ingressStore = roles.ingresses && live.stores.get(roles.ingresses.name);
    if (ingressStore) state.neighbourhood.follow(ingressStore);
    let judgement: Judgement;
    try {
      judgement = judge(live.config, live.stores, resource, object, state.neighbourhood, state.render);
    } catch (error) {
      return failed(`the configuration cannot render it: ${errorMessage(error)}`);
    }
    if (judgement.contribution === undefined) {
      const message = judgement.denials.join('\n');
      return answer('denied', { allowed: false, message, warnings: judgement.warnings }, message);
    }
    let checked: CheckedContribution;
    try {
      checked = await withDeadline(state.checker.check(judgement.contribution), deadline - answerMarginMs);
    } catch (error) {
      return failed(`haproxy -c could not judge it: ${errorMessage(error)}`);
    }
    const check = checked.cached ? 'cached' : 'ran';
    if (!checked.verdict.valid) {
      const message = `haproxy -c refuses the configuration made for it: ${checked.verdict.message}`;
      return answer('denied', { allowed: false, message, warnings: judgement.warnings }, message, check);
    }
    return answer('allowed', { allowed: true, warnings: judgement.warnings }, undefined, check);
  }

  /** The object as the store would hold it. */
  #proposed(config: ControllerConfig, resource: WatchedResource, request: AdmissionRequest): KubeObject {
    const object = normaliseObject(request.object!, resource.apiVersion, resource.kind);
    const namespaced = object.metadata.namespace === undefined && request.namespace !== undefined ? { ...object, metadata: { ...object.metadata, namespace: request.namespace } } : object;
    return withoutIgnoredFields(namespaced, config.ignoreFields);
  }

  #stateFor(config: ControllerConfig): ConfigState {
    if (this.#state?.config === config) return this.#state;
    const options = this.#options;
    // The checks render into temporary directories: a renderer of their own keeps the judging one's output, which reads the base directory, reusable.
    const renderChecked = worldRenderer(config);
    const checker = new ContributionChecker({
      concurrency: options.checkConcurrency ?? Math.max(1, Math.min(4, Math.floor(availableParallelism() / 2))),
      render: renderChecked,
      check: (render) =>
        checkSmallConfiguration(render, {
          allowDirectives: config.allowDirectives,
          dirs: config.dataplane,
          ...(options.haproxyBinary === undefined ? {} : { binary: options.haproxyBinary }),
          ...(options.tmpRoot === undefined ? {} : { tmpRoot: options.tmpRoot }),
        }),
    });
    this.#state = { config, neighbourhood: new IngressNeighbourhood(config.ingress.className), render: worldRenderer(config), checker };
    return this.#state;
  }
}

async function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('it did not finish before the API server stops waiting')), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
