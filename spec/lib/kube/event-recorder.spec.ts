import { expect } from 'chai';
import { kubeConnectionFromFile } from '../../../lib/kube/kube-connection.ts';
import { EventRecorder, type EventRecord, type EventRecorderOptions, type TrailingWrite } from '../../../lib/kube/event-recorder.ts';
import { outcomeEvents } from '../../../lib/kube/outcome-events.ts';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { ManualClock } from '../../support/clocks.ts';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.ts';
import { Notifier } from '../../support/notifier.ts';

/**
 * EventRecorder on the real client-node against the fake API server, both
 * on one virtual clock: series, throttling, budgets, trailing writes and
 * the server's Event expiry as the API sees them, with no real time passing.
 */

type StoredEvent = { metadata: { name: string; namespace: string }; note: string; series?: { count: number }; regarding: { kind: string; name: string } };

/** A deployment to a HAProxy pod refused at the connection, as outcome-events.ts words it. */
const refused = (pod: string, revision: number): EventRecord => ({
  regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'haproxy', name: pod },
  type: 'Warning',
  reason: 'DeployFailed',
  action: 'Deploy',
  note: `deploying revision ${revision} failed, retrying: connection refused`,
});

describe('EventRecorder', () => {
  let fake: FakeApiServer;
  let clock: ManualClock;
  let trailing: TrailingWrite[];
  let wrote: Notifier;

  const recorder = async (options: Partial<EventRecorderOptions> = {}, eventTtlSeconds?: number) => {
    fake = await startFakeApiServer({ clock, ...(eventTtlSeconds === undefined ? {} : { eventTtlSeconds }) });
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'haproxy' } });
    const kubeConnection = kubeConnectionFromFile(fake.kubeconfigPath);
    const trail = (write: TrailingWrite) => {
      trailing.push(write);
      wrote.changed();
    };
    return new EventRecorder(kubeConnection, { controller: 'haproxy-template-ic', instance: 'controller-0', clock, trailing: trail, ...options });
  };
  const stored = () => fake.list('events.k8s.io/v1', 'Event') as unknown as StoredEvent[];
  /** Moves the clock to `at` ms after the start. */
  const at = (ms: number) => clock.advance(1_000_000 + ms - clock.now());
  const trailingWrites = (count: number) =>
    wrote.until(
      () => (trailing.length >= count ? trailing : undefined),
      () => `${trailing.length} of ${count} trailing writes`,
      5_000,
    );

  beforeEach(() => {
    clock = new ManualClock(1_000_000);
    trailing = [];
    wrote = new Notifier();
  });

  afterEach(async () => {
    await fake.close();
  });

  it("writes a DeployFailed Event for every failed attempt by the series rules: repeats count up one Event, at most one write per 30 s, within the pod's budget", async () => {
    const events = await recorder();
    const context = { configSources: [], resources: [] };
    const failed = (revision: number, attempt: number, final: boolean, error = 'HTTP 503 from the Data Plane API'): Outcome => ({
      type: 'deployFailed',
      endpoint: 'haproxy/haproxy-0',
      revision,
      hash: 'h',
      reason: 'change',
      error,
      attempt,
      final,
    });
    const record = async (time: number, outcome: Outcome) => {
      await at(time);
      return Promise.all(outcomeEvents(outcome, context).map((event) => events.record(event)));
    };

    expect(await record(0, failed(4, 1, false))).to.deep.equal(['created']);
    // The retries a second and three seconds later fail alike: counted, not written yet.
    expect(await record(1_000, failed(4, 2, false))).to.deep.equal(['skipped']);
    expect(await record(3_000, failed(4, 3, false))).to.deep.equal(['skipped']);
    expect(await record(7_000, failed(4, 4, true))).to.deep.equal(['created']);
    // The window ends 30 s after the first write: the two counted retries are written then, no later failure needed.
    const retrying = 'deploying revision 4 failed, retrying: HTTP 503 from the Data Plane API';
    await at(30_000);
    expect((await trailingWrites(1)).map((write) => ('result' in write ? [write.event.note, write.result, write.count] : write.error))).to.deep.equal([[retrying, 'updated', 3]]);
    expect(new Map(stored().map((event) => [event.note, event])).get(retrying)?.series).to.deep.include({ count: 3 });
    // A drift repair of the same revision fails alike a minute later: written at once, carrying every occurrence so far.
    expect(await record(60_000, failed(4, 1, false))).to.deep.equal(['updated']);
    const byNote = new Map(stored().map((event) => [event.note, event]));
    expect(byNote.get(retrying)?.series).to.deep.include({ count: 4 });
    expect(byNote.get('deploying revision 4 failed, gave up after 4 attempts: HTTP 503 from the Data Plane API')?.series).to.equal(undefined);
    expect(stored().every((event) => event.metadata.namespace === 'haproxy' && event.regarding.kind === 'Pod' && event.regarding.name === 'haproxy-0')).to.equal(true);

    // A pod failing differently every time spends its budget (10 writes, 4 spent, one more back after a minute): the rest are counted, not written.
    const flapping = [];
    for (let i = 0; i < 10; i++) flapping.push(...(await record(61_000, failed(5, 1, false, `error ${i}`))));
    expect(flapping).to.deep.equal([...Array<string>(7).fill('created'), 'skipped', 'skipped', 'skipped']);
    expect(stored()).to.have.length(9);
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
    // A server with --event-ttl=10m: shorter than the series window (30 minutes), so an Event can expire while its series lives on.
    const events = await recorder({}, 600);
    const event = refused('haproxy-1', 9);
    expect(await events.record(event)).to.equal('created');
    const [first] = stored();
    // Ten minutes later the server has let the Event expire.
    await clock.advance(600_000);
    expect(stored()).to.deep.equal([]);
    await clock.advance(60_000);
    expect(await events.record(event)).to.equal('created');
    const [again] = stored();
    expect(again?.metadata.name).to.not.equal(first?.metadata.name);
    expect(again?.series).to.deep.include({ count: 2 });
    // And the series goes on on the new Event.
    await clock.advance(60_000);
    expect(await events.record(event)).to.equal('updated');
    expect(stored().map((written) => [written.metadata.name, written.series?.count])).to.deep.equal([[again?.metadata.name, 3]]);
  });

  it('drops a trailing write while it may not write (not the leader), and when closed', async () => {
    let leader = true;
    const events = await recorder({ active: () => leader });
    const event = refused('haproxy-2', 3);
    expect(await events.record(event)).to.equal('created');
    await clock.advance(1_000);
    expect(await events.record(event)).to.equal('skipped');
    leader = false;
    await clock.advance(30_000);
    expect(trailing).to.deep.equal([]);
    expect(stored().map((written) => written.series)).to.deep.equal([undefined]);
    // Leading again, the next occurrence is written at once with every count, and a later one is held for the window.
    leader = true;
    expect(await events.record(event)).to.equal('updated');
    expect(stored().map((written) => written.series?.count)).to.deep.equal([3]);
    await clock.advance(1_000);
    // The server's own timer (the Event's expiry) stays; the recorder's trailing write goes with close().
    const serverTimers = clock.pending;
    expect(await events.record(event)).to.equal('skipped');
    expect(clock.pending).to.equal(serverTimers + 1);
    events.close();
    expect(clock.pending).to.equal(serverTimers);
  });
});
