import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Link, type Span, type SpanContext, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { defaultMaxChangeRefs } from '../pipeline/changes.ts';
import type { EndpointDeploy, Folded, Reconciliation, TrackerEvent } from './reconciliations.ts';
import type { Redactor } from './redaction.ts';

export const instrumentationName = 'haproxy-template-ic';

/** A span an event produced, for metric exemplars. */
export interface TracedEvent {
  readonly event: TrackerEvent;
  readonly span: SpanContext | undefined;
}

export interface ReconciliationTracingOptions {
  readonly tracerProvider: TracerProvider;
  readonly redactor: Redactor;
}

const failedResults = new Set(['render_failed', 'invalid', 'deploy_failed']);
/**
 * Times go to the SDK as dates: it reads a bare number no larger than
 * performance.now() as a time since the process started, not the epoch.
 */
const at = (ms: number) => new Date(ms);
const minScheduleWaitMs = 10;

/** Trace ids for an exemplar, when the span is recorded (sampled) at all. */
export function exemplarLabels(span: SpanContext | undefined): Record<string, string> | undefined {
  if (!span || (span.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
  return { trace_id: span.traceId, span_id: span.spanId };
}

/**
 * Turns reconciliations into traces: one trace per reconciliation, rooted
 * at a `reconcile` span from its first change to its last endpoint, with a
 * span per change it folds in (from the change to the render), `render`
 * linked to those changes (many changes, one render), `validate`, the wait
 * for the deployment interval, and one `deploy <endpoint>` span per
 * endpoint. A configuration dropped on the way hands its changes to the one
 * that replaced it; the trace of the one that delivers them links to their
 * traces and change spans: the root for those dropped before deployment, a
 * deploy span for those an endpoint had not reached yet. Every span gets its
 * parent, links and times explicitly from the values the pipeline carried:
 * after a debounce, the async context holds whichever change happened to
 * schedule the timer, never the reconciliation.
 */
export class ReconciliationTracing {
  readonly #tracer: Tracer;
  readonly #redactor: Redactor;
  readonly #roots = new WeakMap<Reconciliation, Span>();
  /** Where a reconciliation's trace and change spans are, for the ones it may be folded into later. */
  readonly #traced = new WeakMap<Reconciliation, { readonly root: SpanContext; readonly changes: readonly Link[] }>();

  constructor(options: ReconciliationTracingOptions) {
    this.#tracer = options.tracerProvider.getTracer(instrumentationName);
    this.#redactor = options.redactor;
  }

  apply(events: readonly TrackerEvent[]): TracedEvent[] {
    return events.map((event) => ({ event, span: this.#trace(event) }));
  }

  #trace(event: TrackerEvent): SpanContext | undefined {
    switch (event.type) {
      case 'rendered':
        return this.#rendered(event.reconciliation);
      case 'validated':
        return this.#validated(event.reconciliation);
      case 'scheduled':
        return this.#scheduled(event.reconciliation);
      case 'endpointDone':
        return this.#deploy(event.deploy, this.#roots.get(event.reconciliation)?.spanContext());
      case 'closed':
        return this.#closed(event.reconciliation);
      case 'standaloneDone':
        return this.#standalone(event.deploy);
    }
  }

  #child(name: string, parent: SpanContext | undefined, options: { start: number; attributes?: Attributes; kind?: SpanKind; links?: readonly Link[] }): Span {
    const context = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    return this.#tracer.startSpan(
      name,
      {
        kind: options.kind ?? SpanKind.INTERNAL,
        startTime: at(options.start),
        ...(options.attributes ? { attributes: options.attributes } : {}),
        ...(options.links ? { links: [...options.links] } : {}),
        root: parent === undefined,
      },
      context,
    );
  }

  #fail(span: Span, type: string, message: string, time: number): void {
    const scrubbed = this.#redactor.scrub(message);
    span.addEvent('exception', { 'exception.type': type, 'exception.message': scrubbed }, at(time));
    span.setStatus({ code: SpanStatusCode.ERROR, message: scrubbed });
  }

  #rendered(reconciliation: Reconciliation): SpanContext | undefined {
    const root = this.#child('reconcile', undefined, {
      start: reconciliation.start,
      attributes: {
        'reconcile.generation': reconciliation.generation,
        'reconcile.revision': reconciliation.revision,
        'reconcile.changes': reconciliation.changes.count,
      },
    });
    this.#roots.set(reconciliation, root);
    const parent = root.spanContext();
    const links = reconciliation.changes.refs.map((change) => {
      const attributes: Attributes = {
        'change.kind': change.kind,
        'change.type': change.type,
        'change.name': change.name,
        ...(change.namespace !== undefined ? { 'change.namespace': change.namespace } : {}),
      };
      const span = this.#child(`change ${change.kind}`, parent, { start: change.at, attributes });
      span.end(at(Math.max(change.at, reconciliation.render.start)));
      return { context: span.spanContext(), attributes };
    });
    this.#traced.set(reconciliation, { root: parent, changes: links });
    const render = this.#child('render', parent, {
      start: reconciliation.render.start,
      links,
      attributes: {
        'reconcile.revision': reconciliation.revision,
        ...(reconciliation.hash ? { 'config.hash': reconciliation.hash } : {}),
        'render.excluded': reconciliation.excluded,
        'render.warnings': reconciliation.warnings,
      },
    });
    if (reconciliation.render.error !== undefined) this.#fail(render, 'RenderError', reconciliation.render.error, reconciliation.render.end);
    render.end(at(reconciliation.render.end));
    return render.spanContext();
  }

  #validated(reconciliation: Reconciliation): SpanContext | undefined {
    const validation = reconciliation.validation;
    if (!validation) return undefined;
    const span = this.#child('validate', this.#roots.get(reconciliation)?.spanContext(), {
      start: validation.start,
      attributes: {
        'config.hash': reconciliation.hash,
        'validation.verdict': validation.verdict,
        'validation.validations': reconciliation.validations,
        'validation.quarantined': reconciliation.quarantined.length,
        'validation.unavailable': reconciliation.unavailable.length,
      },
    });
    for (const { problem, at: time } of reconciliation.quarantined) {
      span.addEvent('quarantined', { 'quarantine.object': problem.object, 'quarantine.field': problem.field, 'quarantine.message': this.#redactor.scrub(problem.message) }, at(time));
    }
    for (const { attempt, error, at: time } of reconciliation.unavailable) {
      span.addEvent('validation unavailable', { 'validation.attempt': attempt, 'exception.message': this.#redactor.scrub(error) }, at(time));
    }
    if (validation.error !== undefined) this.#fail(span, 'ValidationError', validation.error, validation.end);
    span.end(at(validation.end));
    return span.spanContext();
  }

  #scheduled(reconciliation: Reconciliation): SpanContext | undefined {
    const schedule = reconciliation.schedule;
    // Below that, the configuration was handed over at once: no wait worth a span.
    if (!schedule || schedule.end - schedule.start < minScheduleWaitMs) return undefined;
    const span = this.#child('wait for deployment interval', this.#roots.get(reconciliation)?.spanContext(), {
      start: schedule.start,
      attributes: { 'deploy.endpoints': reconciliation.deploys.size },
    });
    span.end(at(schedule.end));
    return span.spanContext();
  }

  /**
   * Links to the traces of folded reconciliations, then to their change
   * spans, up to the cap; the attributes keep the exact counts.
   */
  #foldedLinks(folded: Folded): { links: Link[]; attributes: Attributes } {
    if (folded.count === 0) return { links: [], attributes: {} };
    const traced = folded.reconciliations.flatMap((reconciliation) => {
      const spans = this.#traced.get(reconciliation);
      return spans ? [{ revision: reconciliation.revision, ...spans }] : [];
    });
    const links = [
      ...traced.map(({ revision, root }) => ({ context: root, attributes: { 'reconcile.revision': revision } })),
      ...traced.flatMap(({ revision, changes }) => changes.map((link) => ({ ...link, attributes: { ...link.attributes, 'reconcile.revision': revision } }))),
    ].slice(0, defaultMaxChangeRefs);
    return { links, attributes: { 'reconcile.folded': folded.count, 'reconcile.folded.changes': folded.changes } };
  }

  #deploy(deploy: EndpointDeploy, parent: SpanContext | undefined): SpanContext | undefined {
    const { result } = deploy;
    const folded = this.#foldedLinks(deploy.folded);
    const span = this.#child(`deploy ${deploy.endpoint}`, parent, {
      start: deploy.start,
      kind: SpanKind.CLIENT,
      links: folded.links,
      attributes: {
        ...folded.attributes,
        'haproxy.endpoint': deploy.endpoint,
        'deploy.reason': deploy.reason,
        'deploy.outcome': deploy.ended ?? 'pending',
        'deploy.attempts': deploy.attempts,
        'deploy.retries': Math.max(deploy.attempts - 1, 0),
        'config.hash': deploy.hash,
        ...(result
          ? {
              'deploy.mode': result.mode,
              'deploy.operations': result.operations,
              ...(result.reloadReason !== undefined ? { 'deploy.reload.reason': this.#redactor.scrub(result.reloadReason) } : {}),
              ...(result.reloadId !== undefined ? { 'deploy.reload.id': result.reloadId } : {}),
            }
          : {}),
      },
    });
    for (const failure of deploy.failures) {
      span.addEvent('exception', { 'exception.type': 'DeployError', 'exception.message': this.#redactor.scrub(failure.error), 'deploy.attempt': failure.attempt }, at(failure.at));
    }
    const last = deploy.failures.at(-1);
    if (deploy.ended === 'failed' && last) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.#redactor.scrub(`failed after ${last.attempt} attempt${last.attempt === 1 ? '' : 's'}: ${last.error}`) });
    }
    span.end(at(deploy.end ?? deploy.start));
    return span.spanContext();
  }

  #closed(reconciliation: Reconciliation): SpanContext | undefined {
    const root = this.#roots.get(reconciliation);
    if (!root) return undefined;
    this.#roots.delete(reconciliation);
    // Known only now: the root began before anything was folded into it.
    const folded = this.#foldedLinks(reconciliation.folded);
    root.addLinks(folded.links);
    root.setAttributes({
      ...folded.attributes,
      'reconcile.result': reconciliation.result ?? 'abandoned',
      'deploy.endpoints': reconciliation.deploys.size,
      ...(reconciliation.hash ? { 'config.hash': reconciliation.hash } : {}),
    });
    if (failedResults.has(reconciliation.result ?? '')) root.setStatus({ code: SpanStatusCode.ERROR, message: reconciliation.result });
    root.end(at(reconciliation.end ?? reconciliation.start));
    return root.spanContext();
  }

  /** A drift repair, a new endpoint's first deployment or a confirmation's files written: a trace of its own, when it did or met something. */
  #standalone(deploy: EndpointDeploy): SpanContext | undefined {
    if (deploy.failures.length === 0 && (deploy.result === undefined || deploy.result.mode === 'unchanged')) return undefined;
    const name = deploy.reason === 'drift' ? 'repair drift' : deploy.reason === 'confirmed' ? 'persist confirmed configuration' : 'deploy to new endpoint';
    const root = this.#child(name, undefined, {
      start: deploy.start,
      attributes: { 'reconcile.revision': deploy.revision, 'haproxy.endpoint': deploy.endpoint },
    });
    const span = this.#deploy(deploy, root.spanContext());
    if (deploy.ended === 'failed') root.setStatus({ code: SpanStatusCode.ERROR, message: 'deploy_failed' });
    root.end(at(deploy.end ?? deploy.start));
    return span;
  }
}
