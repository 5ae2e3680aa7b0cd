import { BehaviorSubject, defer, finalize, map, Observable, timer, type SchedulerLike, type Subject, type Subscriber } from 'rxjs';
import { defaultPipelineSettings, type PipelineSettings } from '../../lib/config/pipeline-settings.ts';
import type { DeployRequest, DeployResult, Endpoint, KubeObject, RenderedFiles, RenderOutput, ResourceEvent, Snapshot, ValidationVerdict } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { controller, type ConfigLoad } from '../../streams/controller.ts';
import { reconcile } from '../../streams/reconcile.ts';
import type { Planner } from '../../lib/deploy/shared-planner.ts';

/**
 * A virtual-time world for the composed pipeline: an informer-like source
 * that lists on every subscription (as a real informer does after a
 * restart), endpoints as a whole-set stream, and effects with fixed
 * durations that record every call.
 */

export const durations = { renderMs: 10, validateMs: 50, deployMs: 20 };

export function endpoint(id: string): Endpoint {
  return { id, url: `http://${id}.haproxy:5555` };
}

function ingress(name: string, port: number, version: number): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'default', resourceVersion: String(version) },
    spec: { port },
  };
}

export interface Call {
  readonly at: number;
  readonly revision: number;
  readonly config: string;
}

export interface DeployCall extends Call {
  readonly endpoint: string;
  readonly reason: DeployRequest['reason'];
  /** The files object the deployment was given (a fleet's shared planner knows a plan by it). */
  readonly files: RenderedFiles;
}

/** How one endpoint answers its nth deploy call (n from 1). */
export type EndpointBehaviour = (call: number, request: DeployRequest) => Observable<DeployResult>;

export class FakeWorld {
  readonly renders: Call[] = [];
  readonly validations: Call[] = [];
  readonly deployCalls: DeployCall[] = [];
  readonly outcomes: { at: number; outcome: Outcome }[] = [];
  readonly endpoints: BehaviorSubject<readonly Endpoint[]>;
  /** The fleet's members apart from the endpoints (a follower's: every pod, deploying to none); the endpoints when unset. */
  members: Subject<readonly Endpoint[]> | undefined;
  /** The fleet's planner, which runtime-first's question is asked of; the default planner when unset. */
  plan: Planner | undefined;
  /** Subscriptions currently open on the resource source and on deploy effects. */
  openSources = 0;
  openDeploys = 0;
  sourceSubscriptions = 0;
  readonly #objects = new Map<string, KubeObject>();
  readonly #listeners = new Set<Subscriber<ResourceEvent>>();
  readonly #behaviours = new Map<string, EndpointBehaviour>();
  readonly #callsPerEndpoint = new Map<string, number>();
  readonly #scheduler: SchedulerLike;
  #version = 1;
  #invalidConfigs = new Set<string>();

  constructor(scheduler: SchedulerLike, endpoints: readonly string[], ingresses = 3) {
    this.#scheduler = scheduler;
    this.endpoints = new BehaviorSubject<readonly Endpoint[]>(endpoints.map(endpoint));
    for (let i = 0; i < ingresses; i++) this.#objects.set(`ing-${i}`, ingress(`ing-${i}`, 8000, this.#version++));
  }

  /** The informer-like source: the current objects, `synced`, then live changes. */
  readonly events = new Observable<ResourceEvent>((subscriber) => {
    this.openSources++;
    this.sourceSubscriptions++;
    for (const object of this.#objects.values()) subscriber.next({ type: 'added', kind: 'Ingress', object });
    subscriber.next({ type: 'synced', kind: 'Ingress' });
    this.#listeners.add(subscriber);
    return () => {
      this.openSources--;
      this.#listeners.delete(subscriber);
    };
  });

  /** Changes one Ingress's port, which changes the rendered configuration. */
  modify(name: string, port: number): void {
    const object = ingress(name, port, this.#version++);
    this.#objects.set(name, object);
    for (const listener of this.#listeners) listener.next({ type: 'modified', kind: 'Ingress', object });
  }

  /** Completes every open resource source. */
  endSources(): void {
    for (const listener of [...this.#listeners]) listener.complete();
  }

  /** Configurations rendered with this port anywhere fail validation. */
  rejectPort(port: number): void {
    this.#invalidConfigs.add(`:${port}`);
  }

  behave(endpointId: string, behaviour: EndpointBehaviour): void {
    this.#behaviours.set(endpointId, behaviour);
  }

  readonly render = (snapshot: Snapshot): Observable<RenderOutput> =>
    defer(() => {
      const objects = snapshot.stores.get('Ingress')?.list() ?? [];
      // One line per Ingress, sorted, each charged to its Ingress as the renderer would.
      const lines = objects
        .map((o) => ({ text: `backend ${o.metadata.name} :${String((o['spec'] as { port: number }).port)}`, object: o }))
        .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
      // Then the fleet's peers, as the shipped template lists them (after the Ingresses' lines, which keep their numbers).
      const config = [...lines.map((line) => line.text), ...(snapshot.peers ?? []).map((peer) => `peer ${peer.name} ${peer.address}`)].join('\n');
      const origins = lines.map(({ object }) => {
        const source = { label: `Ingress default/${object.metadata.name}`, field: 'spec.port', object };
        return { template: 'templates.haproxyConfig', line: 1, objects: [source.label], sources: [source] };
      });
      this.renders.push({ at: this.#scheduler.now(), revision: snapshot.revision, config });
      return timer(durations.renderMs, this.#scheduler).pipe(
        map((): RenderOutput => ({
          files: { config, maps: {}, certificates: {}, files: {} },
          excluded: [],
          warnings: [],
          origins: new Map([['haproxy.cfg', origins]]),
        })),
      );
    });

  readonly validate = (rendered: { revision: number; files: RenderedFiles }): Observable<ValidationVerdict> =>
    defer(() => {
      const config = rendered.files.config;
      this.validations.push({ at: this.#scheduler.now(), revision: rendered.revision, config });
      // HAProxy names each line with a refused port, as it does.
      const alerts = config.split('\n').flatMap((line, index) => {
        const bad = [...this.#invalidConfigs].find((marker) => line.endsWith(marker));
        if (bad === undefined) return [];
        const detail = `port ${bad.slice(1)} refused`;
        return [{ message: `parsing [haproxy.cfg:${index + 1}] : ${detail}`, detail, locations: [{ file: 'haproxy.cfg', line: index + 1 }], files: [], sections: [] }];
      });
      return timer(this.validateMs, this.#scheduler).pipe(
        map((): ValidationVerdict => (alerts.length > 0 ? { status: 'invalid', message: alerts.map((a) => a.message).join('\n'), alerts } : { status: 'valid' })),
      );
    });

  validateMs = durations.validateMs;

  readonly deploy = (request: DeployRequest): Observable<DeployResult> =>
    defer(() => {
      const id = request.endpoint.id;
      const call = (this.#callsPerEndpoint.get(id) ?? 0) + 1;
      this.#callsPerEndpoint.set(id, call);
      this.deployCalls.push({
        at: this.#scheduler.now(),
        endpoint: id,
        reason: request.reason,
        revision: request.config.revision,
        config: request.config.files.config,
        files: request.config.files,
      });
      this.openDeploys++;
      const behaviour = this.#behaviours.get(id) ?? healthy;
      return behaviour(call, request).pipe(finalize(() => this.openDeploys--));
    });

  /** Outcomes of one type, with the time they were reported. */
  of<T extends Outcome['type']>(type: T): { at: number; outcome: Extract<Outcome, { type: T }> }[] {
    return this.outcomes.filter((entry): entry is { at: number; outcome: Extract<Outcome, { type: T }> } => entry.outcome.type === type);
  }

  /** The whole controller over a stream of configuration candidates, recording every outcome. */
  run(candidates: Observable<string>, settings: (raw: string) => ConfigLoad<PipelineSettings> = defaultLoad): Observable<Outcome> {
    return candidates.pipe(
      controller({
        load: settings,
        pipeline: (pipelineSettings, report) =>
          this.events.pipe(
            reconcile({
              watched: [{ kind: 'Ingress', indexBy: [(o) => o.metadata.namespace] }],
              settings: pipelineSettings,
              endpoints: this.endpoints,
              ...(this.members === undefined ? {} : { members: this.members }),
              ...(this.plan === undefined ? {} : { plan: this.plan }),
              render: this.render,
              validate: this.validate,
              deploy: this.deploy,
              report,
              scheduler: this.#scheduler,
              random: () => 0.5,
              // Its endpoints run the rendered lines as they are, as a local HAProxy does.
              exactConfigLines: true,
            }),
          ),
      }),
      (outcomes) =>
        new Observable<Outcome>((subscriber) =>
          outcomes.subscribe({
            next: (outcome) => {
              this.outcomes.push({ at: this.#scheduler.now(), outcome });
              subscriber.next(outcome);
            },
            error: (error: unknown) => subscriber.error(error),
            complete: () => subscriber.complete(),
          }),
        ),
    );
  }
}

export function healthy(): Observable<DeployResult> {
  return timer(durations.deployMs).pipe(map((): DeployResult => ({ mode: 'runtime', operations: 1 })));
}

/** "default" is the shipped settings; "trailing" the seed's trailing debounce; "runtime-first" deploys runtime-only changes while they are validated; "fast-drift" checks drift every 10 s; anything else is rejected. */
function defaultLoad(raw: string): ConfigLoad<PipelineSettings> {
  if (raw === 'default') return { ok: true, config: defaultPipelineSettings };
  if (raw === 'trailing') return { ok: true, config: { ...defaultPipelineSettings, leadingEdge: false } };
  if (raw === 'runtime-first') return { ok: true, config: { ...defaultPipelineSettings, runtimeFirst: true } };
  if (raw === 'fast-drift') return { ok: true, config: { ...defaultPipelineSettings, driftCheckIntervalMs: 10_000 } };
  return { ok: false, errors: [`config ${raw}: debounce: "soon" is not a duration`] };
}
