import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type SpanContext, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { AdmissionRecord } from '../webhook/admission-handler.ts';
import type { Redactor } from './redaction.ts';
import { instrumentationName } from './tracing.ts';

/**
 * One span per AdmissionReview the webhook answers, `admission <resource>`
 * (span kind server), from the request's arrival to the answer. An API
 * server that traces (APIServerTracing) sends its `Call validating
 * webhook` span's context as `traceparent`: the admission span is then its
 * child, so the webhook shows inside the write it judged.
 */

const propagator = new W3CTraceContextPropagator();

export interface AdmissionTiming {
  /** Milliseconds since the epoch. */
  readonly start: number;
  readonly end: number;
}

export class AdmissionTracing {
  readonly #tracer: Tracer;
  readonly #redactor: Redactor;

  constructor(options: { readonly tracerProvider: TracerProvider; readonly redactor: Redactor }) {
    this.#tracer = options.tracerProvider.getTracer(instrumentationName);
    this.#redactor = options.redactor;
  }

  /** Ends the span of one review; returns its context, for a metric exemplar. */
  trace(record: AdmissionRecord, timing: AdmissionTiming, headers: Readonly<Record<string, unknown>>): SpanContext {
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(
      `admission ${record.resource}`,
      {
        kind: SpanKind.SERVER,
        startTime: new Date(timing.start),
        attributes: {
          'admission.uid': record.uid,
          'admission.resource': record.resource,
          ...(record.operation === undefined ? {} : { 'admission.operation': record.operation }),
          ...(record.namespace === undefined ? {} : { 'admission.namespace': record.namespace }),
          'admission.name': record.name,
          'admission.result': record.result,
          'admission.check': record.check,
          'admission.warnings': record.warnings.length,
        },
      },
      trace.getSpanContext(parent) ? parent : ROOT_CONTEXT,
    );
    if (record.reason !== undefined) span.setAttribute('admission.reason', this.#redactor.scrub(record.reason));
    if (record.result === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: this.#redactor.scrub(record.reason ?? 'error') });
    span.end(new Date(timing.end));
    return span.spanContext();
  }
}
