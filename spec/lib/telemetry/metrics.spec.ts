import { expect } from 'chai';
import type { StoreReader } from '../../../lib/pipeline/model.ts';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { openMetricsToPrometheus } from '../../../lib/telemetry/exposition.ts';
import { createMetrics } from '../../../lib/telemetry/metrics.ts';
import { ReconciliationTracker } from '../../../lib/telemetry/reconciliation-tracker.ts';
import { change } from '../../support/pipeline-values.ts';
import { deployed, deployFailed, deploying, quarantined, released, reload, rendered, runtime, validated, validationFailed, validationUnavailable } from '../../support/outcome-builders.ts';
import { histogramTotals, parseExposition, sampleValue } from '../../support/prometheus-text.ts';

const p = 'haproxy_template_ic_';
const openMetrics = 'application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5';

/** One runtime-only deploy, one reload, one failed validation, one failed attempt on a second endpoint. */
const scenario: Outcome[] = [
  { type: 'configApplied', generation: 1 },
  rendered(2, [change('web', 0)], 12),
  validated(2, 40),
  deploying(2, ['a', 'b']),
  deployed(2, 'a', runtime, { durationMs: 30, latencyMs: 700 }),
  deployFailed(2, 'b', 1, false),
  deployed(2, 'b', runtime, { durationMs: 1_200, latencyMs: 2_000, attempts: 2 }),
  rendered(3, [change('api', 0)]),
  validated(3),
  deploying(3, ['a']),
  deployed(3, 'a', reload, { durationMs: 400, latencyMs: 1_500 }),
  rendered(4, [change('bad', 0)]),
  validationFailed(4, "unknown keyword 'bnd'"),
];

describe('metrics', () => {
  it('counts renders, validations, deployments, reloads and runtime-only deploys, and times them', async () => {
    const metrics = createMetrics({ exemplars: false, stores: () => undefined });
    for (const outcome of scenario) metrics.outcome(outcome);
    const { contentType, body } = await metrics.expose(undefined);
    expect(contentType).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = parseExposition(body, { openMetrics: false });
    expect(sampleValue(text, `${p}renders_total`, { result: 'success' })).to.equal(3);
    expect(sampleValue(text, `${p}validations_total`, { result: 'valid' })).to.equal(2);
    expect(sampleValue(text, `${p}validations_total`, { result: 'invalid' })).to.equal(1);
    expect(sampleValue(text, `${p}runtime_deploys_total`, { endpoint: 'a' })).to.equal(1);
    expect(sampleValue(text, `${p}runtime_deploys_total`, { endpoint: 'b' })).to.equal(1);
    expect(sampleValue(text, `${p}reloads_total`, { endpoint: 'a' })).to.equal(1);
    expect(sampleValue(text, `${p}deploys_total`, { endpoint: 'b', mode: 'none', reason: 'change', result: 'failure' })).to.equal(1);
    expect(histogramTotals(text, `${p}change_to_deploy_seconds`, { mode: 'runtime' })).to.deep.equal({ count: 2, sum: 2.7 });
    expect(histogramTotals(text, `${p}change_to_deploy_seconds`, { mode: 'reload' })).to.deep.equal({ count: 1, sum: 1.5 });
    expect(histogramTotals(text, `${p}render_duration_seconds`).count).to.equal(3);
    expect(histogramTotals(text, `${p}validation_duration_seconds`, { result: 'invalid' })).to.deep.equal({ count: 1, sum: 0.05 });
    expect(sampleValue(text, `${p}deployed_config_info`, { hash: 'hash-3' })).to.equal(1);
    expect(sampleValue(text, `${p}deployed_config_info`, { hash: 'hash-2' })).to.equal(0);
    expect(sampleValue(text, `${p}config_loads_total`, { result: 'applied' })).to.equal(1);
    // Node's process metrics, under the same prefix.
    expect(text.has(`${p}process_cpu_user_seconds_total`)).to.equal(true);
  });

  it('counts quarantined objects by kind, keeps the number in quarantine, and counts validations that could not run apart from invalid ones', async () => {
    const metrics = createMetrics({ exemplars: false, stores: () => undefined });
    for (const outcome of [rendered(5), validationUnavailable(5, 1), validationUnavailable(5, 2), quarantined(5, 1), quarantined(6, 2, 'reload'), released(7, 1)]) metrics.outcome(outcome);
    const text = parseExposition((await metrics.expose(undefined)).body, { openMetrics: false });
    expect(sampleValue(text, `${p}quarantines_total`, { kind: 'Ingress' })).to.equal(2);
    expect(sampleValue(text, `${p}quarantined_objects`, {})).to.equal(1);
    expect(sampleValue(text, `${p}validations_total`, { result: 'unavailable' })).to.equal(2);
    expect(sampleValue(text, `${p}validations_total`, { result: 'invalid' })).to.equal(0);
    metrics.outcome({ type: 'configApplied', generation: 2 });
    expect(sampleValue(parseExposition((await metrics.expose(undefined)).body, { openMetrics: false }), `${p}quarantined_objects`, {})).to.equal(0);
  });

  it('counts reconciliations by result with their duration', async () => {
    const metrics = createMetrics({ exemplars: false, stores: () => undefined });
    const tracker = new ReconciliationTracker();
    let at = 0;
    for (const outcome of scenario) {
      for (const event of tracker.apply(outcome, (at += 100))) if (event.type === 'closed') metrics.reconciliation(event.reconciliation);
    }
    const text = parseExposition((await metrics.expose(undefined)).body, { openMetrics: false });
    expect(sampleValue(text, `${p}reconciliations_total`, { result: 'deployed' })).to.equal(2);
    expect(sampleValue(text, `${p}reconciliations_total`, { result: 'invalid' })).to.equal(1);
    // From each render's start to its last endpoint: revision 2 from 188 to 700 ms, revision 3 from 790 to 1100 ms.
    expect(histogramTotals(text, `${p}reconciliation_duration_seconds`, { result: 'deployed' }).sum).to.be.closeTo(0.512 + 0.31, 1e-9);
  });

  it('carries trace ids as exemplars for scrapers that ask for OpenMetrics, and plain Prometheus text for the others', async () => {
    const metrics = createMetrics({ exemplars: true, stores: () => undefined });
    const exemplar = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' };
    for (const outcome of scenario) metrics.outcome(outcome, outcome.type === 'deployed' ? exemplar : undefined);
    const asked = await metrics.expose(openMetrics);
    expect(asked.contentType).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const om = parseExposition(asked.body, { openMetrics: true });
    const withExemplars = om.get(`${p}change_to_deploy_seconds`)?.samples.filter((s) => s.exemplar) ?? [];
    expect(withExemplars.map((s) => s.exemplar?.labels)).to.deep.include(exemplar);
    expect(sampleValue(om, `${p}reloads_total`, { endpoint: 'a' })).to.equal(1);
    const plain = await metrics.expose('text/plain');
    expect(plain.contentType).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = parseExposition(plain.body, { openMetrics: false });
    expect(text.get(`${p}reloads_total`)?.type).to.equal('counter');
    expect(sampleValue(text, `${p}reloads_total`, { endpoint: 'a' })).to.equal(1);
    expect(histogramTotals(text, `${p}change_to_deploy_seconds`)).to.deep.equal(histogramTotals(om, `${p}change_to_deploy_seconds`));
  });

  it('bounds the endpoint label, counts resources per watched type live, and takes the in-cluster hooks', async () => {
    const ingresses = new IndexedStore([]);
    const stores = new Map<string, StoreReader>([['ingresses', ingresses]]);
    const metrics = createMetrics({ exemplars: false, maxEndpointLabels: 2, stores: () => stores });
    for (const endpoint of ['a', 'b', 'c', 'd']) metrics.outcome(deployed(1, endpoint, reload));
    metrics.informerRestarted('ingresses');
    metrics.manifestWatchRestarted();
    metrics.haproxyRestarted();
    metrics.haproxyRestarted();
    metrics.leader(true);
    ingresses.upsert({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default' } });
    const text = parseExposition((await metrics.expose(undefined)).body, { openMetrics: false });
    expect(text.get(`${p}reloads_total`)?.samples.map((s) => [s.labels['endpoint'], s.value])).to.deep.equal([
      ['a', 1],
      ['b', 1],
      ['other', 2],
    ]);
    expect(sampleValue(text, `${p}resources`, { type: 'ingresses' })).to.equal(1);
    expect(sampleValue(text, `${p}informer_restarts_total`, { resource: 'ingresses' })).to.equal(1);
    expect(sampleValue(text, `${p}leader`)).to.equal(1);
    expect(sampleValue(text, `${p}manifest_watch_restarts_total`)).to.equal(1);
    expect(sampleValue(text, `${p}haproxy_restarts_total`)).to.equal(2);
  });

  it('turns OpenMetrics into Prometheus text without touching label values that look like exemplars', () => {
    const om = [
      '# HELP x_events things',
      '# TYPE x_events counter',
      'x_events_total{path="a # {b}"} 2',
      '# HELP x_seconds time',
      '# TYPE x_seconds histogram',
      'x_seconds_bucket{le="1"} 1 # {trace_id="abc"} 0.5 1700000000.000',
      'x_seconds_bucket{le="+Inf"} 1',
      'x_seconds_sum 0.5',
      'x_seconds_count 1',
      '# EOF',
      '',
    ].join('\n');
    expect(openMetricsToPrometheus(om)).to.equal(
      [
        '# HELP x_events_total things',
        '# TYPE x_events_total counter',
        'x_events_total{path="a # {b}"} 2',
        '# HELP x_seconds time',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{le="1"} 1',
        'x_seconds_bucket{le="+Inf"} 1',
        'x_seconds_sum 0.5',
        'x_seconds_count 1',
        '',
      ].join('\n'),
    );
  });
});
