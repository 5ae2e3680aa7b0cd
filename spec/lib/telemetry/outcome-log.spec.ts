import { expect } from 'chai';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import { outcomeLog, reconciliationLog } from '../../../lib/telemetry/outcome-log.ts';
import { ReconciliationTracker } from '../../../lib/telemetry/reconciliation-tracker.ts';
import { change } from '../../support/pipeline-values.ts';
import {
  deployed,
  deployFailed,
  deploying,
  quarantined,
  released,
  reload,
  rendered,
  runtime,
  synced,
  unchanged,
  validated,
  validationFailed,
  validationUnavailable,
} from '../../support/outcome-builders.ts';

const messages = (outcome: Parameters<typeof outcomeLog>[0]) => outcomeLog(outcome).map((e) => [e.level, e.msg]);

describe('outcome log', () => {
  it('says how each deployment went, on the endpoint it concerns: runtime or reload with its reason, and how long it took', () => {
    expect(outcomeLog(deployed(3, 'local', runtime, { durationMs: 12, latencyMs: 530 }))).to.deep.equal([
      {
        level: 'info',
        stage: 'deploy',
        endpoint: 'local',
        msg: 'deployed revision 3 to local: runtime, no reload (2 operations) in 12 ms, 530 ms after the change',
        fields: { revision: 3, hash: 'hash-3', reason: 'change', mode: 'runtime', operations: 2, attempts: 1, durationMs: 12, latencyMs: 530 },
      },
    ]);
    expect(messages(deployed(3, 'local', reload, { durationMs: 12, latencyMs: 530 }))).to.deep.equal([
      ['info', 'deployed revision 3 to local: reload (backend default_api_80 added) in 12 ms, 530 ms after the change'],
    ]);
    expect(outcomeLog(deployed(3, 'local', reload))[0]?.fields).to.include({ reloadId: '7' });
    // A drift check that found nothing is routine.
    expect(messages(deployed(3, 'local', unchanged, { reason: 'drift', durationMs: 4 }))).to.deep.equal([['debug', 'deployed revision 3 to local: unchanged in 4 ms']]);
    // A runtime-first confirmation: its files written, or found written already (routine).
    expect(messages(deployed(3, 'local', { mode: 'persisted', operations: 0 }, { reason: 'confirmed', durationMs: 3 }))).to.deep.equal([
      ['info', 'deployed revision 3 to local: files written (the runtime applied it before its verdict) in 3 ms'],
    ]);
    expect(messages(deployed(3, 'b', unchanged, { reason: 'confirmed', durationMs: 2 }))).to.deep.equal([['debug', 'deployed revision 3 to b: unchanged in 2 ms']]);
    expect(messages(deployFailed(3, 'b', 2, false, 'HTTP 500'))).to.deep.equal([['warn', 'deploy to b failed (attempt 2, retrying): HTTP 500']]);
    expect(messages(deployFailed(3, 'b', 5, true, 'HTTP 500'))).to.deep.equal([['error', 'deploy to b failed (attempt 5, giving up on this revision): HTTP 500']]);
  });

  it('names the object, file or setting at fault in every error', () => {
    expect(messages({ type: 'resourceError', error: 'app.yaml#2: has no kind' })).to.deep.equal([['error', 'app.yaml#2: has no kind']]);
    expect(messages({ type: 'configRejected', errors: ['config.yaml: debounce: bad'] })).to.deep.equal([
      ['error', 'configuration rejected, the running one keeps serving:\n    config.yaml: debounce: bad'],
    ]);
    const withProblems = {
      ...rendered(1),
      excluded: [{ object: 'Ingress default/evil', field: 'spec.rules[0].host', message: 'not a host name' }],
      warnings: [{ object: 'Ingress default/shop', field: 'spec.rules[0].http.paths[0]', message: 'no Service web' }],
    };
    expect(messages(withProblems)).to.deep.equal([
      ['debug', 'rendered revision 1 (hash-1) in 10 ms'],
      ['warn', 'excluded Ingress default/evil: spec.rules[0].host: not a host name'],
      ['warn', 'warning Ingress default/shop: spec.rules[0].http.paths[0]: no Service web'],
    ]);
    // A template reading a name about to go: its line, told once per configuration (the renderer tells it only once).
    expect(messages({ ...rendered(1), deprecations: ['templates.haproxyConfig: line 3: reads `ingress`, the old name of `routes`'] })).to.deep.equal([
      ['debug', 'rendered revision 1 (hash-1) in 10 ms'],
      ['warn', 'deprecated: templates.haproxyConfig: line 3: reads `ingress`, the old name of `routes`'],
    ]);
    expect(messages(validationFailed(2, 'haproxy.cfg:3: x\n  rendered: "y"'))).to.deep.equal([
      ['error', 'configuration invalid, the running one keeps serving:\n    haproxy.cfg:3: x\n      rendered: "y"'],
    ]);
  });

  it('names each quarantined object with its field and the message of HAProxy, its release, and a validation that could not run', () => {
    expect(outcomeLog(quarantined(4, 1))).to.deep.equal([
      {
        level: 'warn',
        stage: 'validate',
        msg: "quarantined Ingress shop/web: metadata.annotations.timeout: HAProxy refused the configuration with it, left out until it changes: haproxy.cfg:12: unexpected character 'q' (revision 4 rendered again without it)",
        fields: { revision: 4, hash: 'hash-4-again', object: 'Ingress shop/web', field: 'metadata.annotations.timeout', by: 'validation', quarantined: 1 },
      },
    ]);
    expect(messages(quarantined(4, 1, 'reload'))[0]![1]).to.match(/\(rendering again without it\)$/);
    expect(messages(released(5))).to.deep.equal([['info', 'released Ingress shop/web from quarantine: it changed or went, so revision 5 renders it again']]);
    expect(messages(validationUnavailable(6, 2))).to.deep.equal([
      ['warn', 'could not validate revision 6 (attempt 2), the running configuration keeps serving; trying again in 2000 ms: ENOSPC: no space left on device, mkdtemp'],
    ]);
  });

  it('counts what each watched type holds once listed, and keeps routine steps at debug', () => {
    const ingresses = new IndexedStore([]);
    ingresses.upsert({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default' } });
    expect(
      messages(
        synced(
          new Map([
            ['ingresses', ingresses],
            ['services', new IndexedStore([])],
          ]),
        ),
      ),
    ).to.deep.equal([['info', 'resources listed (ingresses 1, services 0)']]);
    // Stores handed over from the last controller configuration were not listed again, and the line says so.
    expect(messages({ ...synced(new Map([['ingresses', ingresses]])), kept: true })).to.deep.equal([['info', 'resources kept from the last configuration (ingresses 1)']]);
    expect(messages(validated(2, 40))).to.deep.equal([['debug', 'revision 2 is valid (40 ms)']]);
    expect(messages(deploying(2, ['a', 'b']))).to.deep.equal([['debug', 'deploying revision 2 to 2 endpoint(s)']]);
  });

  it('sums a finished reconciliation up from its first change', () => {
    const tracker = new ReconciliationTracker();
    tracker.apply(rendered(2, [change('web', 1_000)]), 1_510);
    tracker.apply(validated(2), 1_560);
    tracker.apply(deploying(2, ['a']), 1_561);
    const [, closed] = tracker.apply(deployed(2, 'a'), 1_600);
    expect(closed?.type === 'closed' && reconciliationLog(closed.reconciliation)).to.deep.include({
      level: 'debug',
      msg: 'reconciliation of revision 2 deployed after 600 ms (1 change, 1 endpoint(s))',
    });
  });
});
