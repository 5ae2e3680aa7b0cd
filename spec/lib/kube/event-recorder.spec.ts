import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { EventRecorder, type EventRecord } from '../../../lib/kube/event-recorder.ts';
import { outcomeEvents } from '../../../lib/kube/outcome-events.ts';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { eventually } from '../../support/eventually.ts';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../../support/fake-apiserver/index.ts';

/**
 * EventRecorder on the real client-node against the fake API server, with
 * its clock injected: series, throttling and budgets as the API sees them.
 */

type StoredEvent = { metadata: { name: string; namespace: string }; note: string; series?: { count: number }; regarding: { kind: string; name: string } };

describe('EventRecorder', () => {
  let fake: FakeApiServer;
  let now: number;

  const recorder = async (options: FakeApiServerOptions = {}) => {
    fake = await startFakeApiServer(options);
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'haproxy' } });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(fake.kubeconfigPath);
    return new EventRecorder(kubeConfig, { controller: 'haproxy-template-ic', instance: 'controller-0', now: () => now });
  };
  const stored = () => fake.list('events.k8s.io/v1', 'Event') as unknown as StoredEvent[];

  beforeEach(() => {
    now = 1_000_000;
  });

  afterEach(async () => {
    await fake.close();
  });

  it("writes a DeployFailed Event for every failed attempt by the series rules: repeats count up one Event, at most one write per 30 s, within the pod's budget", async () => {
    const events = await recorder();
    const context = { configSources: [], resources: [] };
    const failed = (revision: number, attempt: number, final: boolean, error = 'HTTP 503 from the Data Plane API'): Outcome => ({
      type: 'deployFailed', endpoint: 'haproxy/haproxy-0', revision, hash: 'h', reason: 'change', error, attempt, final,
    });
    const record = async (at: number, outcome: Outcome) => {
      now = 1_000_000 + at;
      return Promise.all(outcomeEvents(outcome, context).map((event) => events.record(event)));
    };

    expect(await record(0, failed(4, 1, false))).to.deep.equal(['created']);
    // The retries a second and three seconds later fail alike: counted, not written yet.
    expect(await record(1_000, failed(4, 2, false))).to.deep.equal(['skipped']);
    expect(await record(3_000, failed(4, 3, false))).to.deep.equal(['skipped']);
    expect(await record(7_000, failed(4, 4, true))).to.deep.equal(['created']);
    // A drift repair of the same revision fails alike a minute later: that write carries every occurrence so far.
    expect(await record(60_000, failed(4, 1, false))).to.deep.equal(['updated']);
    const byNote = new Map(stored().map((event) => [event.note, event]));
    expect(byNote.get('deploying revision 4 failed, retrying: HTTP 503 from the Data Plane API')?.series).to.deep.include({ count: 4 });
    expect(byNote.get('deploying revision 4 failed, gave up after 4 attempts: HTTP 503 from the Data Plane API')?.series).to.equal(undefined);
    expect(stored().every((event) => event.metadata.namespace === 'haproxy' && event.regarding.kind === 'Pod' && event.regarding.name === 'haproxy-0')).to.equal(true);

    // A pod failing differently every time spends its budget (10 writes, 3 spent, one more back after a minute): the rest are counted, not written.
    const flapping = [];
    for (let i = 0; i < 10; i++) flapping.push(...(await record(61_000, failed(5, 1, false, `error ${i}`))));
    expect(flapping).to.deep.equal([...Array<string>(8).fill('created'), 'skipped', 'skipped']);
    expect(stored()).to.have.length(10);
  });

  it('files Events about cluster-scoped objects in default, where the API server accepts them', async () => {
    const events = await recorder();
    const event: EventRecord = {
      regarding: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', namespace: undefined, name: 'haproxy' },
      type: 'Warning',
      reason: 'ObjectExcluded',
      action: 'Render',
      note: 'left out of the HAProxy configuration',
    };
    expect(await events.record(event)).to.equal('created');
    expect(stored().map((written) => [written.metadata.namespace, written.regarding.name])).to.deep.equal([['default', 'haproxy']]);
  });

  it('creates an Event again, series and all, when bumping its series finds it gone (expired after the event TTL)', async () => {
    // An hour of server time in 100 ms: the Event expires while its series lives on.
    const events = await recorder({ timeScale: 36_000 });
    const event: EventRecord = {
      regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'haproxy', name: 'haproxy-1' },
      type: 'Warning',
      reason: 'DeployFailed',
      action: 'Deploy',
      note: 'deploying revision 9 failed, retrying: connection refused',
    };
    expect(await events.record(event)).to.equal('created');
    const [first] = stored();
    await eventually(async () => stored(), (left) => left.length === 0, 'the Event to expire');
    now += 60_000;
    expect(await events.record(event)).to.equal('created');
    const [again] = stored();
    expect(again?.metadata.name).to.not.equal(first?.metadata.name);
    expect(again?.series).to.deep.include({ count: 2 });
    // And the series goes on on the new Event.
    now += 60_000;
    expect(await events.record(event)).to.equal('updated');
    expect(stored().map((written) => [written.metadata.name, written.series?.count])).to.deep.equal([[again?.metadata.name, 3]]);
  });
});
