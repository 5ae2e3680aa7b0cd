import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { haproxyBinary } from '../../lib/haproxy/check.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { startTracing, type TracingSdk } from '../../lib/telemetry/tracing-sdk.ts';
import { startLocalMode, type LocalMode } from '../../streams/local-mode.ts';
import { startEmulator, type Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { Notifier } from '../support/notifier.ts';
import { reservePort } from '../support/ports.ts';
import { documents, ingress, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { histogramTotals, parseExposition, sampleValue, type Exposition } from '../support/prometheus-text.ts';
import { base64, LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * Logs, metrics, traces, health and debug views of the controller over one
 * scripted run: local mode deploying to three emulated Data Plane API
 * instances (each a real HAProxy), exporting traces over OTLP/HTTP to a
 * receiver in the spec, scraped over HTTP like Prometheus would. The steps
 * build on each other and run in order.
 */

const pod = { baseDir: '/etc/haproxy', statsSocket: '/var/run/haproxy/admin.sock' };
const dpapi = { user: 'admin', password: 'dpapi-Pw-3f9a71c2' };
const p = 'haproxy_template_ic_';

const web = (paths: readonly string[], port: number) =>
  documents(
    ingress(
      'web',
      'web.example.com',
      paths.map((path) => [path, 'Prefix', 'web', { number: 80 }] as const),
    ),
    service('web', [{ port: 80, targetPort: port }]),
    slice('web-0', 'web', undefined, port),
  );
const secure = documents(ingress('secure', 'secure.example.com', [['/', 'Prefix', 'web', { number: 80 }]], 'shop-tls'), tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY));

type Deployed = Extract<Outcome, { type: 'deployed' }>;

describe('observability end to end', function () {
  this.timeout(90_000);
  const emulators: Emulator[] = [];
  const outcomes: Outcome[] = [];
  const arrived = new Notifier();
  const logLines: string[] = [];
  const scrapes: string[] = [];
  const debugViews: string[] = [];
  let receiver: OtlpReceiver;
  let tracing: TracingSdk;
  let mode: LocalMode | undefined;
  let dir = '';
  let manifests = '';
  let configPath = '';
  let configText = '';
  let backendPort = 0;

  const ids = () => mode!.fleet.endpoints.map((endpoint) => endpoint.id);
  const mark = () => outcomes.length;
  /** Resolves with the outcomes after `from` once `done` accepts them; fails with what was seen after `timeoutMs`. */
  const until = <T>(from: number, done: (seen: readonly Outcome[]) => T | undefined, what: string, timeoutMs = 20_000) =>
    arrived.until(
      () => done(outcomes.slice(from)),
      () =>
        `no ${what}; saw ${outcomes
          .slice(from)
          .map((o) => o.type)
          .join(', ')}`,
      timeoutMs,
    );
  /** The first change deployment on each endpoint named, after `from`. */
  const deployedOn = (from: number, endpoints: readonly string[]) =>
    until(
      from,
      (seen) => {
        const found = new Map<string, Deployed>();
        for (const o of seen) if (o.type === 'deployed' && o.reason === 'change' && endpoints.includes(o.endpoint) && !found.has(o.endpoint)) found.set(o.endpoint, o);
        return found.size === endpoints.length ? found : undefined;
      },
      `deployment to ${endpoints.join(', ')}`,
    );
  const health = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${mode!.observer.healthPort}${path}`);
    const body = await response.text();
    if (path.startsWith('/debug')) debugViews.push(body);
    return { status: response.status, body };
  };
  const scrape = async (accept?: string): Promise<Exposition> => {
    const response = await fetch(`http://127.0.0.1:${mode!.observer.metricsPort}/metrics`, accept ? { headers: { accept } } : {});
    const text = await response.text();
    scrapes.push(text);
    const openMetrics = response.headers.get('content-type')?.startsWith('application/openmetrics-text') ?? false;
    return parseExposition(text, { openMetrics });
  };
  const delta = (before: Exposition, after: Exposition, name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
  const summed = (exposition: Exposition, name: string, labels: Record<string, string>) =>
    (exposition.get(name)?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

  before(async () => {
    receiver = await OtlpReceiver.start();
    const saved = { endpoint: process.env['OTEL_EXPORTER_OTLP_ENDPOINT'], delay: process.env['OTEL_BSP_SCHEDULE_DELAY'] };
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = receiver.endpoint;
    process.env['OTEL_BSP_SCHEDULE_DELAY'] = '100';
    try {
      tracing = startTracing('spec', process.env)!;
    } finally {
      for (const [name, value] of [
        ['OTEL_EXPORTER_OTLP_ENDPOINT', saved.endpoint],
        ['OTEL_BSP_SCHEDULE_DELAY', saved.delay],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) emulators.push(await startEmulator({ credentials: dpapi, pod: { ...pod, address } }));
    // A backend nobody answers on: its servers' health checks fail, which these cases do not mind.
    backendPort = await reservePort();
    const onPods = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    dir = await mkdtemp(join(tmpdir(), 'observability-e2e-'));
    // Not there yet: the controller starts before its resources can be listed.
    manifests = join(dir, 'manifests');
    configPath = join(dir, 'config.yaml');
    configText = (await readFile(defaultConfigPath(), 'utf8'))
      .replace('  httpPort: 80\n', `  httpPort: ${await reservePort(...onPods)}\n`)
      .replace('  httpsPort: 443\n', `  httpsPort: ${await reservePort(...onPods)}\n`)
      .replace('  statusPort: 8404\n', `  statusPort: ${await reservePort(...onPods)}\n`);
    await writeFile(configPath, configText);
    mode = await startLocalMode({
      manifests,
      config: { path: configPath, watch: true },
      workDir: join(dir, 'work'),
      bindAddress: '127.0.0.1',
      httpPort: 0,
      httpsPort: 0,
      statusPort: 0,
      healthPort: 0,
      metricsPort: 0,
      settleMs: 50,
      dataplane: { urls: emulators.map((e) => e.url), username: dpapi.user, password: dpapi.password, timeoutMs: 2_000 },
      retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 200 },
      stallAfterMs: 1_500,
      log: { level: 'debug', format: 'json', write: (line) => void logLines.push(line) },
      tracerProvider: tracing.provider,
      output: { out: (text) => void logLines.push(text), err: (text) => void logLines.push(text) },
    });
    mode.outcomes.subscribe((outcome) => {
      outcomes.push(outcome);
      arrived.changed();
    });
  });

  after(async () => {
    await mode?.stop();
    await tracing?.shutdown();
    for (const emulator of emulators) await emulator.stop();
    await receiver?.stop();
  });

  it('is live from the start, and ready once the configuration is loaded and the resources listed', async () => {
    expect(await health('/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
    const early = await health('/readyz');
    expect(early.status).to.equal(503);
    expect(early.body).to.match(/^not ready: waiting for .*initial sync done\n$/);
    const from = mark();
    await mkdir(manifests);
    await writeFile(join(manifests, 'web.yaml'), web(['/'], backendPort));
    await writeFile(join(manifests, 'secure.yaml'), secure);
    await until(from, (seen) => seen.find((o) => o.type === 'synced'), 'initial sync');
    expect(await health('/readyz')).to.deep.equal({ status: 200, body: 'ready\n' });
    await deployedOn(from, ids());
  });

  it('makes one Ingress change exactly one trace: changes linked to the render, then validate and a deploy span per endpoint, the failing one an error', async () => {
    await tracing.forceFlush();
    const tracesBefore = new Set(receiver.traces().keys());
    const before = await scrape();
    const [sick, ...healthy] = ids() as [string, string, string];
    emulators[0]!.faults.failNext(1_000, 500);
    const from = mark();
    await writeFile(join(manifests, 'web.yaml'), web(['/', '/extra'], backendPort));
    await deployedOn(from, healthy);
    await until(from, (seen) => seen.find((o) => o.type === 'deployFailed' && o.endpoint === sick && o.final), `final failure on ${sick}`);
    emulators[0]!.faults.reset();
    await tracing.forceFlush();

    const traces = [...receiver.traces()].filter(([id]) => !tracesBefore.has(id));
    expect(traces, 'traces exported for the change').to.have.length(1);
    const spans = traces[0]![1];
    const named = (name: string) => spans.filter((span) => span.name === name);
    const [root] = named('reconcile');
    expect(named('reconcile')).to.have.length(1);
    expect(root?.parentSpanId).to.equal(undefined);
    expect(root?.resource['service.name']).to.equal('haproxy-template-ic');
    expect(root?.attributes).to.deep.include({ 'reconcile.changes': 1, 'reconcile.result': 'deploy_failed', 'deploy.endpoints': 3 });
    expect(root?.status.code).to.equal(2);
    expect(
      spans.filter((span) => span !== root).every((span) => span.parentSpanId === root?.spanId),
      'every other span is a child of the root',
    ).to.equal(true);

    const [changeSpan] = named('change ingresses');
    expect(named('change ingresses')).to.have.length(1);
    expect(changeSpan?.attributes).to.deep.include({ 'change.name': 'web', 'change.namespace': 'default', 'change.type': 'modified' });
    const [render] = named('render');
    expect(render?.links.map((link) => [link.traceId, link.spanId])).to.deep.equal([[changeSpan?.traceId, changeSpan?.spanId]]);
    expect(named('validate').map((span) => span.attributes['validation.verdict'])).to.deep.equal(['valid']);
    // The trace starts with the change, whose span lasts until the render starts: the wait before the
    // render made visible (none for an idle controller, the debounce for a change right after a render).
    expect(root?.startMs).to.equal(changeSpan?.startMs);
    expect(changeSpan?.endMs).to.equal(render?.startMs);

    const deploys = spans.filter((span) => span.name.startsWith('deploy '));
    expect(deploys.map((span) => span.name).sort()).to.deep.equal(
      ids()
        .map((id) => `deploy ${id}`)
        .sort(),
    );
    const deployOf = (id: string) => deploys.find((span) => span.attributes['haproxy.endpoint'] === id) as ReceivedSpan;
    for (const id of healthy) {
      expect(deployOf(id).status.code, id).to.equal(0);
      expect(deployOf(id).attributes).to.deep.include({ 'deploy.mode': 'runtime', 'deploy.retries': 0, 'deploy.outcome': 'deployed' });
      expect(deployOf(id).kind).to.equal(3);
    }
    const failing = deployOf(sick);
    expect(failing.status.code).to.equal(2);
    expect(failing.status.message).to.match(/^failed after 2 attempts: /);
    expect(failing.attributes).to.deep.include({ 'deploy.attempts': 2, 'deploy.retries': 1, 'deploy.outcome': 'failed' });
    expect(failing.events.map((event) => [event.name, event.attributes['deploy.attempt']])).to.deep.equal([
      ['exception', 1],
      ['exception', 2],
    ]);
    expect(root!.endMs).to.be.at.least(Math.max(...spans.map((span) => span.endMs)));

    // The same step, counted: two runtime-only deploys and two failed attempts on the sick endpoint.
    const after = await scrape();
    for (const id of healthy) expect(delta(before, after, `${p}runtime_deploys_total`, { endpoint: id }), id).to.equal(1);
    expect(delta(before, after, `${p}runtime_deploys_total`, { endpoint: sick })).to.equal(0);
    expect(delta(before, after, `${p}deploys_total`, { endpoint: sick, mode: 'none', reason: 'change', result: 'failure' })).to.equal(2);
    expect(summed(after, `${p}reloads_total`, {}) - summed(before, `${p}reloads_total`, {})).to.equal(0);
    expect(histogramTotals(after, `${p}change_to_deploy_seconds`, { mode: 'runtime' }).count - histogramTotals(before, `${p}change_to_deploy_seconds`, { mode: 'runtime' }).count).to.equal(
      2,
    );
    expect(delta(before, after, `${p}reconciliations_total`, { result: 'deploy_failed' })).to.equal(1);
  });

  it('moves the counters and histograms as a reload and a failed validation say, with trace ids as exemplars', async () => {
    const before = await scrape();
    let from = mark();
    await writeFile(
      join(manifests, 'api.yaml'),
      documents(
        ingress('api', 'api.example.com', [['/', 'Prefix', 'api', { number: 80 }]]),
        service('api', [{ port: 80, targetPort: backendPort }]),
        slice('api-0', 'api', undefined, backendPort),
      ),
    );
    const reloaded = await deployedOn(from, ids());
    expect([...reloaded.values()].map((o) => o.result.mode)).to.deep.equal(['reload', 'reload', 'reload']);
    const afterReload = await scrape();
    for (const id of ids()) expect(delta(before, afterReload, `${p}reloads_total`, { endpoint: id }), id).to.equal(1);
    expect(summed(afterReload, `${p}runtime_deploys_total`, {})).to.equal(summed(before, `${p}runtime_deploys_total`, {}));
    expect(
      histogramTotals(afterReload, `${p}change_to_deploy_seconds`, { mode: 'reload' }).count - histogramTotals(before, `${p}change_to_deploy_seconds`, { mode: 'reload' }).count,
    ).to.equal(3);
    expect(delta(before, afterReload, `${p}reconciliations_total`, { result: 'deployed' })).to.equal(1);
    expect(delta(before, afterReload, `${p}renders_total`, { result: 'success' })).to.equal(1);

    from = mark();
    await writeFile(configPath, configText.replace('      http-request set-var(txn.path) path', '      http-request set-var(txn.path) path\n      bnd :1'));
    await until(from, (seen) => seen.find((o) => o.type === 'validationFailed'), 'failed validation');
    const afterInvalid = await scrape();
    expect(delta(afterReload, afterInvalid, `${p}validations_total`, { result: 'invalid' })).to.equal(1);
    expect(delta(afterReload, afterInvalid, `${p}reconciliations_total`, { result: 'invalid' })).to.equal(1);
    expect(delta(afterReload, afterInvalid, `${p}config_loads_total`, { result: 'applied' })).to.equal(1);
    expect(summed(afterInvalid, `${p}reloads_total`, {})).to.equal(summed(afterReload, `${p}reloads_total`, {}));
    expect(histogramTotals(afterInvalid, `${p}validation_duration_seconds`, { result: 'invalid' }).count).to.equal(1);

    from = mark();
    await writeFile(configPath, configText);
    await deployedOn(from, ids());

    // Scraped as OpenMetrics, each deployment's latency sample names the trace it belongs to.
    await tracing.forceFlush();
    const openMetrics = await scrape('application/openmetrics-text; version=1.0.0');
    const exemplarTraces = (openMetrics.get(`${p}change_to_deploy_seconds`)?.samples ?? []).flatMap((s) => (s.exemplar ? [s.exemplar.labels['trace_id']] : []));
    expect(exemplarTraces).to.not.be.empty;
    const exported = new Set(receiver.spans.map((span) => span.traceId));
    expect(exemplarTraces.every((id) => id !== undefined && exported.has(id))).to.equal(true);
  });

  it('fails liveness while a validation hangs, and recovers when it ends, with the changes that queued behind it traced', async () => {
    const release = join(dir, 'release-validation');
    const gate = join(dir, 'gated-haproxy');
    await writeFile(gate, `#!/bin/sh\nwhile [ ! -e '${release}' ]; do sleep 0.05; done\nexec '${haproxyBinary()}' "$@"\n`);
    await chmod(gate, 0o755);
    const saved = process.env['HAPROXY_BIN'];
    process.env['HAPROXY_BIN'] = gate;
    try {
      const from = mark();
      const renderedAfter = (at: number) => until(at, (seen) => seen.find((o) => o.type === 'rendered'), 'render');
      await writeFile(join(manifests, 'web.yaml'), web(['/', '/extra', '/more'], backendPort));
      const stalled = await eventually(
        () => health('/healthz'),
        (r) => r.status === 503,
        'liveness to fail',
      );
      expect(stalled.body).to.match(/^stalled: revision \d+ has waited \d+ s for its validation\n$/);
      expect((await health('/readyz')).status).to.equal(200);
      // Two more changes queue behind the hung validation; the second replaces the first, which is never validated.
      let at = mark();
      await writeFile(join(manifests, 'web.yaml'), web(['/', '/extra', '/more', '/two'], backendPort));
      const dropped = await renderedAfter(at);
      at = mark();
      await writeFile(
        join(manifests, 'api.yaml'),
        documents(
          ingress('api', 'api.example.com', [
            ['/', 'Prefix', 'api', { number: 80 }],
            ['/v2', 'Prefix', 'api', { number: 80 }],
          ]),
          service('api', [{ port: 80, targetPort: backendPort }]),
          slice('api-0', 'api', undefined, backendPort),
        ),
      );
      const delivering = await renderedAfter(at);
      await writeFile(release, '');
      await deployedOn(from, ids());
      expect(await health('/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
      await until(
        from,
        (seen) => (seen.filter((o) => o.type === 'deployed' && o.revision === delivering.revision).length === ids().length ? true : undefined),
        `deployment of revision ${delivering.revision}`,
      );
      expect(
        outcomes.slice(from).some((o) => o.type === 'validated' && o.revision === dropped.revision),
        'the dropped revision was validated',
      ).to.equal(false);

      // The trace that delivered both changes links the dropped one's trace and its change span.
      await tracing.forceFlush();
      const rootOf = (revision: number) => receiver.spans.find((span) => span.name === 'reconcile' && span.attributes['reconcile.revision'] === revision);
      const droppedRoot = rootOf(dropped.revision);
      const droppedChange = receiver.spans.find((span) => span.traceId === droppedRoot?.traceId && span.name === 'change ingresses');
      expect(droppedRoot?.attributes['reconcile.result']).to.equal('superseded');
      expect(droppedChange?.attributes['change.name']).to.equal('web');
      const root = rootOf(delivering.revision);
      expect(root?.attributes).to.deep.include({ 'reconcile.result': 'deployed', 'reconcile.folded': 1, 'reconcile.folded.changes': 1 });
      expect(root?.links.map((link) => [link.traceId, link.spanId, link.attributes['reconcile.revision']])).to.deep.equal([
        [droppedRoot?.traceId, droppedRoot?.spanId, dropped.revision],
        [droppedChange?.traceId, droppedChange?.spanId, dropped.revision],
      ]);
    } finally {
      if (saved === undefined) delete process.env['HAPROXY_BIN'];
      else process.env['HAPROXY_BIN'] = saved;
      await writeFile(release, '');
    }
  });

  it('keeps the Data Plane API password and the TLS key out of logs, metrics, traces and debug output', async () => {
    const rendered = JSON.parse((await health('/debug/rendered')).body);
    // The key is in what the controller holds: the check below means something.
    expect(Object.keys(rendered.files.certificates)).to.have.length(1);
    const config = JSON.parse((await health('/debug/config')).body);
    expect(config.settings.dataplane.password).to.equal('[REDACTED]');
    const endpoints = JSON.parse((await health('/debug/endpoints')).body);
    expect(endpoints).to.have.length(3);
    expect((await health('/debug/resources')).body).to.include('shop-tls');
    await scrape();
    await scrape('application/openmetrics-text; version=1.0.0');
    await tracing.forceFlush();

    const outputs = {
      logs: logLines.join(''),
      metrics: scrapes.join(''),
      traces: receiver.bodies.join(''),
      debug: debugViews.join(''),
    };
    expect(outputs.logs).to.include('deployed revision');
    expect(outputs.traces).to.include('deploy ');
    const forbidden = [
      dpapi.password,
      base64(dpapi.password),
      base64(`${dpapi.user}:${dpapi.password}`),
      base64(LEAF_KEY).slice(0, 48),
      ...LEAF_KEY.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----')),
    ];
    for (const [where, text] of Object.entries(outputs)) {
      for (const secret of forbidden) expect(text.includes(secret), `${where} holds ${secret.slice(0, 12)}...`).to.equal(false);
    }
  });

  it('stops answering once stopped', async () => {
    const healthPort = mode!.observer.healthPort;
    const metricsPort = mode!.observer.metricsPort;
    await mode!.stop();
    mode = undefined;
    for (const url of [`http://127.0.0.1:${healthPort}/healthz`, `http://127.0.0.1:${metricsPort}/metrics`]) {
      expect(
        await fetch(url).then(
          () => 'answered',
          () => 'refused',
        ),
        url,
      ).to.equal('refused');
    }
  });
});
