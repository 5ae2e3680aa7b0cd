import { expect } from 'chai';
import { SpanStatusCode } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { ReconciliationTracker } from '../../../lib/telemetry/reconciliation-tracker.ts';
import { Redactor } from '../../../lib/telemetry/redaction.ts';
import { exemplarLabels, ReconciliationTracing, type TracedEvent } from '../../../lib/telemetry/tracing.ts';
import { change } from '../../support/pipeline-values.ts';
import { deployed, deployFailed, deploying, droppedOnTheWay, quarantined, reload, rendered, runtime, unchanged, validated, validationUnavailable } from '../../support/outcome-builders.ts';

function traced(steps: readonly [number, Outcome][], redactor = new Redactor()) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracing = new ReconciliationTracing({ tracerProvider: provider, redactor });
  const tracker = new ReconciliationTracker();
  const results: TracedEvent[] = [];
  for (const [at, outcome] of steps) results.push(...tracing.apply(tracker.apply(outcome, at)));
  const spans = exporter.getFinishedSpans();
  const named = (name: string) => spans.filter((span) => span.name === name);
  return { spans, named, results };
}

const ms = (span: ReadableSpan | undefined) => (span ? [hrTimeToMilliseconds(span.startTime), hrTimeToMilliseconds(span.endTime)] : []);
const attributes = (span: ReadableSpan | undefined) => span?.attributes ?? {};

describe('reconciliation tracing', () => {
  // Two changes folded into one render, deployed to three endpoints, one of which gives up.
  const scenario: [number, Outcome][] = [
    [1_510, rendered(2, [change('web', 1_000, 'ingresses'), change('api', 1_200, 'services')], 10)],
    [1_560, validated(2, 50)],
    [3_500, deploying(2, ['a', 'b', 'c'])],
    [3_520, deployed(2, 'a', runtime)],
    [3_600, deployed(2, 'b', reload)],
    [3_530, deployFailed(2, 'c', 1, false, 'HTTP 500 from c')],
    [4_530, deployFailed(2, 'c', 2, true, 'HTTP 503 from c')],
  ];

  it('makes one trace per reconciliation: a root from the first change to the last endpoint, and a span per stage', () => {
    const { spans, named } = traced(scenario);
    const [root] = named('reconcile');
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).to.equal(1);
    expect(root?.parentSpanContext).to.equal(undefined);
    expect(ms(root)).to.deep.equal([1_000, 4_530]);
    expect(attributes(root)).to.deep.include({ 'reconcile.revision': 2, 'reconcile.changes': 2, 'reconcile.result': 'deploy_failed', 'deploy.endpoints': 3 });
    const children = spans.filter((span) => span !== root);
    expect(children.every((span) => span.parentSpanContext?.spanId === root?.spanContext().spanId)).to.equal(true);
    expect(children.map((span) => span.name).sort()).to.deep.equal(
      ['change ingresses', 'change services', 'deploy a', 'deploy b', 'deploy c', 'render', 'validate', 'wait for deployment interval'].sort(),
    );
    expect(ms(named('render')[0])).to.deep.equal([1_500, 1_510]);
    expect(ms(named('validate')[0])).to.deep.equal([1_510, 1_560]);
    // The minimum deployment interval held the configuration from its verdict to its hand-over.
    expect(ms(named('wait for deployment interval')[0])).to.deep.equal([1_560, 3_500]);
  });

  it('links the render to every change it folds in, and shows each change waiting for the debounce', () => {
    const { named } = traced(scenario);
    const changes = [...named('change ingresses'), ...named('change services')];
    expect(changes.map(ms)).to.deep.equal([
      [1_000, 1_500],
      [1_200, 1_500],
    ]);
    expect(attributes(changes[0])).to.deep.equal({ 'change.kind': 'ingresses', 'change.type': 'modified', 'change.name': 'web', 'change.namespace': 'default' });
    const render = named('render')[0];
    expect(render?.links.map((link) => link.context.spanId)).to.deep.equal(changes.map((span) => span.spanContext().spanId));
    expect(render?.links.map((link) => link.attributes?.['change.name'])).to.deep.equal(['web', 'api']);
  });

  it('gives each endpoint one deploy span with its mode, reload and retries, and marks the one that failed', () => {
    const { named } = traced(scenario);
    const [a, b, c] = [named('deploy a')[0], named('deploy b')[0], named('deploy c')[0]];
    expect(attributes(a)).to.deep.include({ 'haproxy.endpoint': 'a', 'deploy.mode': 'runtime', 'deploy.operations': 2, 'deploy.retries': 0, 'deploy.outcome': 'deployed' });
    expect(attributes(b)).to.deep.include({ 'deploy.mode': 'reload', 'deploy.reload.reason': 'backend default_api_80 added', 'deploy.reload.id': '7' });
    expect(ms(b)).to.deep.equal([3_500, 3_600]);
    expect([a?.status.code, b?.status.code]).to.deep.equal([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
    expect(c?.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'failed after 2 attempts: HTTP 503 from c' });
    expect(attributes(c)).to.deep.include({ 'deploy.attempts': 2, 'deploy.retries': 1, 'deploy.outcome': 'failed' });
    expect(c?.events.map((e) => [e.name, e.attributes?.['exception.message'], e.attributes?.['deploy.attempt'], hrTimeToMilliseconds(e.time)])).to.deep.equal([
      ['exception', 'HTTP 500 from c', 1, 3_530],
      ['exception', 'HTTP 503 from c', 2, 4_530],
    ]);
    expect(named('reconcile')[0]?.status.code).to.equal(SpanStatusCode.ERROR);
  });

  it("links the trace that delivers a dropped configuration's changes to that configuration's trace and change spans", () => {
    // 2 dropped waiting for validation, 3 waiting for the deployment slot, 1 waiting for b.
    const { named } = traced(droppedOnTheWay);
    const rootOf = (revision: number) => named('reconcile').find((span) => span.attributes['reconcile.revision'] === revision);
    const changeSpan = (name: string) => [...named('change Ingress')].find((span) => span.attributes['change.name'] === name);
    const linked = (span: ReadableSpan | undefined) =>
      span?.links.map((link) => [link.context.traceId, link.context.spanId, link.attributes?.['reconcile.revision'], link.attributes?.['change.name']]);
    const target = (span: ReadableSpan | undefined, revision: number, name?: string) => [span?.spanContext().traceId, span?.spanContext().spanId, revision, name];

    const root = rootOf(4);
    expect(attributes(root)).to.deep.include({ 'reconcile.changes': 1, 'reconcile.folded': 2, 'reconcile.folded.changes': 3 });
    expect(linked(root)).to.deep.equal([
      target(rootOf(2), 2),
      target(rootOf(3), 3),
      target(changeSpan('two'), 2, 'two'),
      target(changeSpan('three'), 3, 'three'),
      target(changeSpan('four'), 3, 'four'),
    ]);
    // Each linked span is in the trace of the configuration that was dropped, not in this one.
    expect(new Set(linked(root)?.map(([traceId]) => traceId)).has(root?.spanContext().traceId)).to.equal(false);
    const deploys = named('deploy b').filter((span) => span.spanContext().traceId === root?.spanContext().traceId);
    expect(deploys.map(linked)).to.deep.equal([[target(rootOf(1), 1), target(changeSpan('one'), 1, 'one')]]);
    expect(attributes(deploys[0])).to.deep.include({ 'reconcile.folded': 1, 'reconcile.folded.changes': 1 });
    const plain = named('deploy a').find((span) => span.spanContext().traceId === root?.spanContext().traceId);
    expect([plain?.links, attributes(plain)['reconcile.folded']]).to.deep.equal([[], undefined]);
  });

  it('caps the links of a fold, keeping the exact counts', () => {
    // 2 to 201 queue behind 1's validation, and 1 waits for its slot: 201 takes over from all the others.
    const many = Array.from({ length: 200 }, (_, i) => i + 2);
    const { named } = traced([
      [0, rendered(1)],
      ...many.map((revision): [number, Outcome] => [revision, rendered(revision, [change(`web-${revision}`, revision)])]),
      [500, validated(1)],
      [600, validated(201)],
      [601, deploying(201, ['a'])],
      [650, deployed(201, 'a')],
    ]);
    const root = named('reconcile').find((span) => span.attributes['reconcile.revision'] === 201);
    expect(attributes(root)).to.deep.include({ 'reconcile.folded': 200, 'reconcile.folded.changes': 199 });
    expect(root?.links).to.have.length(128);
    expect(root?.links[0]?.attributes?.['reconcile.revision']).to.equal(2);
  });

  it('hands out the span each event ended, as exemplar labels only when sampled', () => {
    const { results, named } = traced(scenario);
    const render = results.find((r) => r.event.type === 'rendered')?.span;
    expect(exemplarLabels(render)).to.deep.equal({ trace_id: named('render')[0]?.spanContext().traceId, span_id: named('render')[0]?.spanContext().spanId });
    expect(exemplarLabels(render && { ...render, traceFlags: 0 })).to.equal(undefined);
  });

  it('traces a drift repair that changed something, and not a drift check that found nothing', () => {
    const { spans, named } = traced([
      [60_000, deployed(2, 'a', unchanged, { reason: 'drift', durationMs: 5 })],
      [120_000, deployed(2, 'a', runtime, { reason: 'drift', durationMs: 40 })],
    ]);
    expect(spans.map((span) => span.name).sort()).to.deep.equal(['deploy a', 'repair drift']);
    expect(named('deploy a')[0]?.parentSpanContext?.spanId).to.equal(named('repair drift')[0]?.spanContext().spanId);
    expect(ms(named('repair drift')[0])).to.deep.equal([119_960, 120_000]);
  });

  it('traces the files of a runtime-first configuration written once confirmed, and not a confirmation that found them written', () => {
    const { spans } = traced([
      [60_000, deployed(2, 'a', unchanged, { reason: 'confirmed', durationMs: 5 })],
      [61_000, deployed(2, 'a', { mode: 'persisted', operations: 0 }, { reason: 'confirmed', durationMs: 4 })],
    ]);
    expect(spans.map((span) => span.name).sort()).to.deep.equal(['deploy a', 'persist confirmed configuration']);
  });

  it('keeps credentials and key material out of span attributes and events', () => {
    const redactor = new Redactor();
    redactor.add('s3cr3t-password');
    const { named } = traced(
      [
        [0, rendered(1)],
        [50, validated(1)],
        [51, deploying(1, ['a'])],
        [90, deployFailed(1, 'a', 1, true, 'login as admin:s3cr3t-password refused')],
      ],
      redactor,
    );
    // Handed over right after its verdict: no wait worth a span.
    expect(named('wait for deployment interval')).to.deep.equal([]);
    const deploy = named('deploy a')[0];
    expect(deploy?.status.message).to.equal('failed after 1 attempt: login as admin:[REDACTED] refused');
    expect(JSON.stringify(deploy?.events)).to.not.include('s3cr3t-password');
  });

  it('puts the objects quarantined and the validations that could not run on the validate span', () => {
    const { named } = traced([
      [0, rendered(1)],
      [100, validationUnavailable(1, 1)],
      [2_100, quarantined(1)],
      [2_200, validated(1, 2_200)],
    ]);
    const span = named('validate')[0];
    expect(attributes(span)).to.deep.include({
      'config.hash': 'hash-1-again',
      'validation.verdict': 'valid',
      'validation.validations': 2,
      'validation.quarantined': 1,
      'validation.unavailable': 1,
    });
    expect(span?.events.map((event) => [event.name, event.attributes?.['quarantine.object'] ?? event.attributes?.['validation.attempt']])).to.deep.equal([
      ['quarantined', 'Ingress shop/web'],
      ['validation unavailable', 1],
    ]);
    expect(span?.events[0]?.attributes?.['quarantine.field']).to.equal('metadata.annotations.timeout');
  });
});
