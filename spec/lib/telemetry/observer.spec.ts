import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { startObserver, type Observer, type ObserverOptions } from '../../../lib/telemetry/observer.ts';
import { change, files } from '../../support/pipeline-values.ts';
import {
  deployed,
  deployFailed,
  deploying,
  quarantined,
  refusedProblem,
  released,
  rendered,
  runtime,
  synced,
  validated,
  validationFailed,
  validationUnavailable,
} from '../../support/outcome-builders.ts';
import { parseExposition, sampleValue } from '../../support/prometheus-text.ts';
import { base64, LEAF_CERT, LEAF_KEY } from '../../support/tls-fixture.ts';

const password = 'dpapi-pw-7e1c';

async function shippedConfig(): Promise<ControllerConfig> {
  const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return { ...loaded.config, templateValues: { ...loaded.config.templateValues, apiToken: 'tok-9f8e7d6c' } };
}

/** An observer on ports of its own with a clock the spec moves, recording every log line. */
async function observe(overrides: Partial<ObserverOptions> = {}) {
  const clock = { now: 1_000_000 };
  const lines: string[] = [];
  const config = await shippedConfig();
  const observer = await startObserver({
    health: { host: '127.0.0.1', port: 0 },
    metrics: { host: '127.0.0.1', port: 0 },
    log: { level: 'debug', format: 'json', write: (line) => void lines.push(line) },
    config: () => config,
    settings: () => ({ mode: 'spec', dataplane: { urls: ['http://127.0.0.2:5555'], username: 'admin', password } }),
    endpoints: () => [
      { id: 'a', url: 'http://127.0.0.2:5555' },
      { id: 'b', url: 'http://127.0.0.3:5555' },
    ],
    endpointDetails: () => new Map([['a', { version: 7, lastError: undefined }]]),
    secrets: [password],
    stallAfterMs: 60_000,
    now: () => clock.now,
    ...overrides,
  });
  return { observer, clock, lines };
}

async function get(observer: Observer, path: string, port = observer.healthPort): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

describe('observer', () => {
  let running: Observer | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('is live from the start and ready once a configuration is loaded and every type listed, until shutdown', async () => {
    const { observer } = await observe();
    running = observer;
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
    expect(await get(observer, '/readyz')).to.deep.equal({ status: 503, body: 'not ready: waiting for configuration loaded, initial sync done\n' });
    observer.observe({ type: 'configApplied', generation: 1 });
    expect(await get(observer, '/readyz')).to.deep.equal({ status: 503, body: 'not ready: waiting for initial sync done\n' });
    observer.observe(synced(new Map()));
    expect(await get(observer, '/readyz')).to.deep.equal({ status: 200, body: 'ready\n' });
    // The in-cluster mode adds conditions of its own.
    observer.setReadiness('leader election', false);
    expect((await get(observer, '/readyz')).body).to.equal('not ready: waiting for leader election\n');
    observer.setReadiness('leader election', true);
    observer.beginShutdown();
    expect(await get(observer, '/readyz')).to.deep.equal({ status: 503, body: 'shutting down\n' });
    expect((await get(observer, '/healthz')).status).to.equal(200);
    await observer.stop();
    running = undefined;
    const refused = await fetch(`http://127.0.0.1:${observer.healthPort}/healthz`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).to.equal('refused');
  });

  it('fails liveness while a piece of work makes no progress, and when the pipeline stops', async () => {
    const { observer, clock } = await observe();
    running = observer;
    observer.observe(rendered(2, [change('web', clock.now - 600)]));
    clock.now += 60_000;
    expect((await get(observer, '/healthz')).status).to.equal(200);
    clock.now += 1_500;
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 503, body: 'stalled: revision 2 has waited 62 s for its validation\n' });
    observer.observe(validated(2));
    observer.observe(deploying(2, ['a']));
    expect((await get(observer, '/healthz')).status).to.equal(200);
    clock.now += 30_000;
    observer.observe(deployFailed(2, 'a', 1, false));
    clock.now += 59_000;
    // Each failed attempt is progress: a retrying endpoint is not a stalled one.
    expect((await get(observer, '/healthz')).status).to.equal(200);
    observer.observe(deployed(2, 'a'));
    observer.pipelineStopped('manifests could not be watched');
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 503, body: 'the pipeline stopped: manifests could not be watched\n' });
  });

  it('fails liveness, naming the problems, while a part says it cannot do its job, and passes once it recovers', async () => {
    const { observer } = await observe();
    running = observer;
    let watch: string | undefined;
    let other: string | undefined;
    observer.addLivenessCheck(() => watch);
    observer.addLivenessCheck(() => other);
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
    watch = "manifests could not be read: ENOENT: no such file or directory, scandir '/m'";
    other = 'something else';
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 503, body: `${watch}; something else\n` });
    watch = undefined;
    other = undefined;
    expect(await get(observer, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
  });

  it('stays live but not ready while validation cannot run, or the newest configuration is invalid with no object at fault', async () => {
    const { observer, clock } = await observe();
    running = observer;
    observer.observe({ type: 'configApplied', generation: 1 });
    observer.observe(synced(new Map()));
    observer.observe(rendered(2, [change('web', clock.now)]));
    // Retrying for ten minutes is progress, not a stall: a restart would not free the disk.
    for (let attempt = 1; attempt <= 20; attempt++) {
      clock.now += 30_000;
      observer.observe(validationUnavailable(2, attempt));
    }
    expect((await get(observer, '/healthz')).status).to.equal(200);
    expect(await get(observer, '/readyz')).to.deep.equal({
      status: 503,
      body: 'not ready: validation cannot run (attempt 20, trying again): ENOSPC: no space left on device, mkdtemp\n',
    });
    observer.observe(validated(2));
    expect((await get(observer, '/readyz')).status).to.equal(200);
    observer.observe(rendered(3));
    observer.observe(validationFailed(3, "haproxy.cfg:3: unknown keyword 'bnd'"));
    expect(await get(observer, '/readyz')).to.deep.equal({
      status: 503,
      body: 'not ready: revision 3 is invalid and no object is at fault (see /debug/rendered); the last good configuration keeps serving\n',
    });
    expect(JSON.parse((await get(observer, '/debug/rendered')).body).validation).to.deep.include({ status: 'invalid', revision: 3, message: "haproxy.cfg:3: unknown keyword 'bnd'" });
    observer.observe(rendered(4));
    observer.observe(validated(4));
    expect((await get(observer, '/readyz')).status).to.equal(200);
  });

  it('lists the objects in quarantine under /debug/rendered, with the configuration rendered again without them', async () => {
    const { observer } = await observe();
    running = observer;
    observer.observe({ type: 'configApplied', generation: 1 });
    observer.observe(rendered(5));
    observer.observe(quarantined(5));
    let view = JSON.parse((await get(observer, '/debug/rendered')).body);
    expect(view).to.deep.include({ revision: 5, hash: 'hash-5-again', quarantined: [refusedProblem], excluded: [refusedProblem] });
    expect(view.files['haproxy.cfg']).to.equal('# revision 5, again');
    observer.observe(released(6));
    view = JSON.parse((await get(observer, '/debug/rendered')).body);
    expect(view.quarantined).to.deep.equal([]);
  });

  it('serves the configuration, the rendered files, the endpoints and the resources with secrets redacted', async () => {
    const { observer, clock } = await observe();
    running = observer;
    const secrets = new IndexedStore([(o) => o.metadata.namespace, (o) => o.metadata.name]);
    secrets.upsert({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shop-tls', namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': base64(LEAF_CERT), 'tls.key': base64(LEAF_KEY) },
    });
    observer.observe({ type: 'configApplied', generation: 1 });
    observer.observe(
      synced(
        new Map([
          ['secrets', secrets],
          ['ingresses', new IndexedStore([])],
        ]),
      ),
    );
    observer.observe({ ...rendered(2), files: { ...files('global\n  log stdout format raw local0\n'), certificates: { 'default_shop-tls.pem': `${LEAF_CERT}${LEAF_KEY}` } } });
    observer.observe(validated(2));
    observer.observe(deploying(2, ['a', 'b']));
    clock.now += 40;
    observer.observe(deployed(2, 'a', runtime));
    observer.observe(deployFailed(2, 'b', 1, false, `HTTP 401 for admin:${password}`));

    const config = JSON.parse((await get(observer, '/debug/config')).body);
    expect(config.settings.dataplane).to.deep.equal({ urls: ['http://127.0.0.2:5555'], username: 'admin', password: '[REDACTED]' });
    expect(config.controller.templateValues.apiToken).to.equal('[REDACTED]');
    expect(config.controller.watchedResources.map((r: { name: string }) => r.name)).to.deep.equal([
      'ingresses',
      'services',
      'endpointslices',
      'secrets',
      'authsecrets',
      'gatewayclasses',
      'gateways',
      'listenersets',
      'httproutes',
      'grpcroutes',
      'tlsroutes',
      'tcproutes',
      'backendtlspolicies',
      'referencegrants',
      'namespaces',
      'configmaps',
    ]);
    expect(config.controller.templates.haproxyConfig).to.include('global');

    const renderedView = JSON.parse((await get(observer, '/debug/rendered')).body);
    expect(renderedView).to.deep.include({ revision: 2, hash: 'hash-2' });
    expect(renderedView.files['haproxy.cfg']).to.equal('global\n  log stdout format raw local0\n');
    expect(renderedView.files.certificates['default_shop-tls.pem']).to.not.include(LEAF_KEY.split('\n')[1]);
    expect(renderedView.files.certificates['default_shop-tls.pem']).to.include('[REDACTED]');

    const endpoints = JSON.parse((await get(observer, '/debug/endpoints')).body);
    expect(endpoints.map((e: { endpoint: string }) => e.endpoint)).to.deep.equal(['a', 'b']);
    expect(endpoints[0]).to.deep.include({ url: 'http://127.0.0.2:5555', current: true, consecutiveFailures: 0, details: { version: 7 } });
    expect(endpoints[0].deployed).to.deep.include({ revision: 2, hash: 'hash-2', result: { mode: 'runtime', operations: 2 } });
    expect(endpoints[1].lastFailure).to.deep.include({ revision: 2, attempt: 1, final: false, error: 'HTTP 401 for admin:[REDACTED]' });

    const resources = JSON.parse((await get(observer, '/debug/resources')).body);
    expect(resources.types).to.deep.equal([
      { type: 'secrets', count: 1, indexBy: ['metadata.namespace', 'metadata.name'], keys: [['default', 'shop-tls']], truncated: false },
      { type: 'ingresses', count: 0, indexBy: ['metadata.namespace', 'metadata.name'], keys: [], truncated: false },
    ]);

    const all = (await Promise.all(['/debug/config', '/debug/rendered', '/debug/endpoints', '/debug/resources'].map((path) => get(observer, path)))).map((r) => r.body).join('');
    expect(all).to.not.include(password).and.not.include('tok-9f8e7d6c').and.not.include(base64(LEAF_KEY).slice(0, 60));
    expect((await get(observer, '/debug/nothing')).status).to.equal(404);
  });

  it('logs through a child logger per stage and per endpoint, and keeps the password and Secret data out', async () => {
    const { observer, lines, clock } = await observe();
    running = observer;
    const secrets = new IndexedStore([]);
    secrets.upsert({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'auth', namespace: 'default' }, data: { token: base64('bearer-7c9d1e2f3a4b') } });
    observer.observe(synced(new Map([['secrets', secrets]])));
    lines.length = 0;
    // A template that put a Secret's value on a line HAProxy rejects: the error quotes the line.
    observer.observe(rendered(1, [change('web', clock.now - 600)]));
    observer.observe(validationFailed(1, 'haproxy.cfg:12: unknown keyword\n  rendered: "http-request set-header Authorization bearer-7c9d1e2f3a4b"'));
    expect(lines.join('')).to.include('unknown keyword').and.not.include('bearer-7c9d1e2f3a4b');
    lines.length = 0;
    observer.observe(rendered(2, [change('web', clock.now - 600)]));
    observer.observe(validated(2));
    observer.observe(deploying(2, ['a']));
    observer.observe(deployFailed(2, 'a', 1, false, `refused ${password}`));
    observer.observe(deployed(2, 'a', runtime));
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((r) => [r['stage'], r['endpoint']])).to.deep.equal([
      ['render', undefined],
      ['validate', undefined],
      ['deploy', undefined],
      ['deploy', 'a'],
      ['deploy', 'a'],
      ['reconcile', undefined],
    ]);
    expect(lines.join('')).to.not.include(password);
  });

  it('logs a failure of its own instead of throwing it into the pipeline', async () => {
    const broken = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('exporter gone');
        },
        startActiveSpan: () => undefined,
      }),
    };
    const { observer, lines, clock } = await observe({ tracerProvider: broken as unknown as TracerProvider });
    running = observer;
    expect(() => observer.observe(rendered(2, [change('web', clock.now - 600)]))).to.not.throw();
    expect(lines.map((line) => JSON.parse(line).msg)).to.include('observing a rendered outcome failed: exporter gone');
  });

  it('counts in its own registry and, when tracing, puts the trace of each deployment on its samples', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const { observer, clock } = await observe({ tracerProvider });
    running = observer;
    observer.observe(rendered(2, [change('web', clock.now - 600)]));
    observer.observe(validated(2));
    observer.observe(deploying(2, ['a']));
    observer.observe(deployed(2, 'a', runtime));
    const response = await fetch(`http://127.0.0.1:${observer.metricsPort}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    const exposition = parseExposition(await response.text(), { openMetrics: true });
    expect(sampleValue(exposition, 'haproxy_template_ic_reconciliations_total', { result: 'deployed' })).to.equal(1);
    const deploySpan = exporter.getFinishedSpans().find((span) => span.name === 'deploy a');
    const exemplars = exposition.get('haproxy_template_ic_deploy_duration_seconds')?.samples.flatMap((s) => (s.exemplar ? [s.exemplar.labels] : []));
    expect(exemplars).to.deep.equal([{ trace_id: deploySpan?.spanContext().traceId, span_id: deploySpan?.spanContext().spanId }]);
  });

  it("counts, logs and traces each AdmissionReview: a log line per denial, a span under the API server's trace", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const { observer, lines } = await observe({ tracerProvider });
    running = observer;
    const base = { uid: 'u-1', resource: 'ingresses', operation: 'CREATE' as const, namespace: 'shop', name: 'web', warnings: [], check: 'none' as const };
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    observer.admissionReviewed({ ...base, result: 'denied', reason: 'spec.rules[0].host: invalid host' }, { start: 1000, end: 1012 }, { traceparent });
    observer.admissionReviewed({ ...base, uid: 'u-2', result: 'allowed', reason: undefined, check: 'ran' }, { start: 2000, end: 2040 }, {});
    observer.admissionReviewed({ ...base, uid: 'u-3', result: 'error', reason: 'not ready' }, { start: 3000, end: 3001 }, {});
    const exposition = parseExposition(await (await fetch(`http://127.0.0.1:${observer.metricsPort}/metrics`)).text(), { openMetrics: false });
    expect(sampleValue(exposition, 'haproxy_template_ic_webhook_requests_total', { resource: 'ingresses', result: 'denied' })).to.equal(1);
    expect(sampleValue(exposition, 'haproxy_template_ic_webhook_requests_total', { resource: 'ingresses', result: 'allowed' })).to.equal(1);
    expect(sampleValue(exposition, 'haproxy_template_ic_webhook_request_duration_seconds_count', { resource: 'ingresses', result: 'error' })).to.equal(1);
    expect(sampleValue(exposition, 'haproxy_template_ic_webhook_request_duration_seconds_sum', { resource: 'ingresses', result: 'allowed' })).to.be.closeTo(0.04, 1e-9);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['stage'] === 'webhook');
    expect(logged.map((line) => [line['level'], line['msg']])).to.deep.equal([
      [40, 'denied CREATE of ingresses shop/web: spec.rules[0].host: invalid host'],
      [20, 'admitted CREATE of ingresses shop/web'],
      [40, 'could not judge CREATE of ingresses shop/web: not ready'],
    ]);
    const [denied, allowed] = exporter.getFinishedSpans();
    expect(denied!.name).to.equal('admission ingresses');
    expect(denied!.spanContext().traceId).to.equal('0af7651916cd43dd8448eb211c80319c');
    expect(denied!.parentSpanContext?.spanId).to.equal('b7ad6b7169203331');
    expect(denied!.attributes).to.deep.include({ 'admission.result': 'denied', 'admission.reason': 'spec.rules[0].host: invalid host', 'admission.name': 'web' });
    expect(allowed!.parentSpanContext).to.equal(undefined);
  });
});
