import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { ResilientInformer, type InformerOptions } from '../../../lib/kube/informer.ts';
import type { ChangeType, KubeObject } from '../../../lib/pipeline/model.ts';
import { eventually } from '../../support/eventually.ts';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.ts';
import { informerClocks } from '../../support/server-clock.ts';

/**
 * ResilientInformer on the real client-node, against the fake API server
 * over HTTP, on a clock 300 times faster than real time for both: the
 * five-minute watchdog takes a second, client-node's 30 s idle abort 100 ms,
 * and the server's minute between bookmarks 200 ms.
 */

const SCALE = 300;
const options: InformerOptions = { restartBaseMs: 50, restartMaxMs: 200, random: () => 0.5, ...informerClocks(SCALE) };

function service(name: string, labels: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name, labels }, spec: { ports: [{ port: 80 }] } };
}

describe('ResilientInformer', function () {
  this.timeout(20_000);
  let fake: FakeApiServer;
  let informer: ResilientInformer | undefined;
  let events: { type: ChangeType; object: KubeObject }[];
  let restarts: { reason: string; delayMs: number }[];
  let synced: number;

  const start = (informerOptions: InformerOptions = options, labelSelector?: string) => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(fake.kubeconfigPath);
    informer = new ResilientInformer(
      kubeConfig,
      { apiVersion: 'v1', kind: undefined, resource: 'services', namespace: 'default', labelSelector },
      {
        event: (type, object) => events.push({ type, object }),
        synced: () => (synced += 1),
        restarting: (reason, delayMs) => restarts.push({ reason, delayMs }),
      },
      informerOptions,
    );
    informer.start();
  };
  const names = (type: ChangeType) => events.filter((e) => e.type === type).map((e) => e.object.metadata.name);

  beforeEach(async () => {
    fake = await startFakeApiServer({ timeScale: SCALE });
    events = [];
    restarts = [];
    synced = 0;
  });

  afterEach(async () => {
    await informer?.stop();
    await fake.close();
  });

  it('lists in pages, delivers listed objects with the shape of watched ones, and says synced once', async () => {
    for (let i = 0; i < 1_203; i++) fake.create(service(`s-${i}`));
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced');
    expect(names('added')).to.have.length(1_203);
    // LIST items carry no kind on the wire: they get the one the LIST names.
    expect(events[0]!.object).to.deep.include({ apiVersion: 'v1', kind: 'Service' });
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(3);
    fake.create(service('late'));
    fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 's-0' }, { metadata: { labels: { x: 'y' } } });
    fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 's-1' });
    await eventually(async () => events.length, (n) => n === 1_206, 'watch events');
    expect(events.slice(-3).map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['added late', 'modified s-0', 'deleted s-1']);
    expect(events.at(-2)!.object.kind).to.equal('Service');
    expect(synced).to.equal(1);
  });

  it('restarts after a failed LIST with backoff, and never later than a 429 asks', async () => {
    fake.create(service('a'));
    fake.faults.failNext(2, { verb: 'list', status: 500 });
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced after two failed lists');
    expect(restarts.map((r) => r.delayMs)).to.deep.equal([37.5, 75]);
    expect(names('added')).to.deep.equal(['a']);

    restarts = [];
    fake.faults.throttleNext(1, { verb: 'list', retryAfterSeconds: 1 });
    // The watch fails; meanwhile b is created and the history compacted, so the resumed watch
    // is too old (410) and the informer relists, and that LIST is throttled.
    fake.faults.failNext(1, { verb: 'watch', status: 500 });
    fake.faults.stallWatches(true, 'services');
    fake.create(service('b'));
    fake.compactHistory();
    fake.faults.dropWatches();
    fake.faults.stallWatches(false, 'services');
    await eventually(async () => names('added'), (added) => added.includes('b'), 'b after the throttled relist', 10_000);
    expect(restarts.some((r) => r.delayMs >= 1_000 && /429|Too Many Requests/i.test(r.reason))).to.equal(true, JSON.stringify(restarts));
  });

  it('replaces a watch that went silent with a fresh LIST, delivering what it missed, deletions included', async () => {
    fake.create(service('kept'));
    fake.create(service('removed'));
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced');
    fake.faults.stallWatches(true, 'services');
    fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'removed' });
    fake.create(service('added-while-stalled'));
    // The watch stays silent (no events, no bookmarks): after the watchdog's second a fresh LIST brings both changes.
    await eventually(
      async () => [names('deleted'), names('added')],
      ([deleted, added]) => deleted!.includes('removed') && added!.includes('added-while-stalled'),
      'the relist',
      10_000,
    );
    expect(restarts.some((r) => /nothing received for 1000 ms/.test(r.reason))).to.equal(true);
    fake.faults.stallWatches(false, 'services');
    expect(names('added').filter((n) => n === 'kept')).to.have.length(1);
  });

  it('keeps a healthy quiet watch without relisting: the server ends each watch, a bookmark first, before client-node would abort it', async () => {
    fake.create(service('quiet'));
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced');
    // Twenty 25 s watches: over eight minutes of server time, past the five-minute watchdog.
    await eventually(async () => fake.requests.matching({ verb: 'watch', resource: 'services' }).length, (count) => count >= 20, 'twenty watches', 10_000);
    expect(restarts).to.deep.equal([]);
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(1);
    const asked = new URLSearchParams(fake.requests.matching({ verb: 'watch', resource: 'services' })[0]!.query);
    expect([asked.get('timeoutSeconds'), asked.get('allowWatchBookmarks')]).to.deep.equal(['25', 'true']);
    expect(names('added')).to.deep.equal(['quiet']);
  });

  it('keeps a quiet watch on a server that sends no bookmarks: a watch the server ended by itself is a sign of life', async () => {
    fake.faults.withholdBookmarks(true);
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced');
    // Ten 25 s watches and client-node's growing waits before each reopen (1 s, 2 s... 30 s): past the five-minute watchdog.
    await eventually(async () => fake.requests.matching({ verb: 'watch', resource: 'services' }).length, (count) => count >= 10, 'ten watches', 10_000);
    expect(restarts).to.deep.equal([]);
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(1);
  });

  it('treats a watch whose every reopen fails as deaf: restarts, then a fresh LIST once the watchdog sees no sign of life', async () => {
    fake.create(service('a'));
    start();
    await eventually(async () => synced, (n) => n === 1, 'synced');
    fake.faults.failNext(1_000, { verb: 'watch', status: 503 });
    fake.faults.dropWatches();
    fake.create(service('b'));
    await eventually(async () => restarts.map((r) => r.reason), (reasons) => reasons.some((reason) => /nothing received for 1000 ms/.test(reason)), 'the watchdog', 10_000);
    expect(restarts.some((r) => /503|Service Unavailable/i.test(r.reason))).to.equal(true, JSON.stringify(restarts));
    // The fresh LIST brought what the failing watch could not.
    await eventually(async () => names('added'), (added) => added.includes('b'), 'b from the relist');
    fake.faults.reset();
  });

  it('treats an object leaving the label selector as deleted', async () => {
    fake.create(service('a', { tier: 'edge' }));
    start(options, 'tier=edge');
    await eventually(async () => synced, (n) => n === 1, 'synced');
    fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'a' }, { metadata: { labels: { tier: 'core' } } });
    await eventually(async () => names('deleted'), (deleted) => deleted.includes('a'), 'a leaving the selection');
  });
});
