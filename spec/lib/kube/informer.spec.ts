import { expect } from 'chai';
import { kubeConnectionFromFile } from '../../../lib/kube/kube-connection.ts';
import { defaultInformerOptions, ResilientInformer, type InformerOptions } from '../../../lib/kube/informer.ts';
import type { ChangeType, KubeObject } from '../../../lib/pipeline/model.ts';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.ts';
import { Notifier } from '../../support/notifier.ts';

/**
 * ResilientInformer against the fake API server over HTTP, both on the
 * server's clock, 300 times faster than real time: the five-minute
 * watchdog takes a second, the 30 s watch idle abort
 * 100 ms, and the server's minute between bookmarks 200 ms. Every wait is on
 * what the informer reports or the server receives.
 */

const SCALE = 300;

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
  let reported: Notifier;

  const start = (labelSelector?: string, transform?: (object: KubeObject) => KubeObject) => {
    const kubeConnection = kubeConnectionFromFile(fake.kubeconfigPath);
    const options: InformerOptions = { restartBaseMs: 50, restartMaxMs: 200, watchdogMs: defaultInformerOptions.watchdogMs, random: () => 0.5, clock: fake.clock };
    informer = new ResilientInformer(
      kubeConnection,
      { apiVersion: 'v1', kind: undefined, resource: 'services', namespace: 'default', labelSelector, transform },
      {
        event: (type, object) => {
          events.push({ type, object });
          reported.changed();
        },
        synced: () => {
          synced += 1;
          reported.changed();
        },
        restarting: (reason, delayMs) => {
          restarts.push({ reason, delayMs });
          reported.changed();
        },
      },
      options,
    );
    informer.start();
  };
  const names = (type: ChangeType) => events.filter((e) => e.type === type).map((e) => e.object.metadata.name);
  /** Resolves once the informer has reported what `holds` looks for. */
  const until = (holds: () => boolean, what: string, timeoutMs = 10_000) =>
    reported.until(
      () => (holds() ? true : undefined),
      () => `${what}: restarts ${JSON.stringify(restarts)}`,
      timeoutMs,
    );
  const isSynced = () => synced === 1;

  beforeEach(async () => {
    fake = await startFakeApiServer({ timeScale: SCALE });
    events = [];
    restarts = [];
    synced = 0;
    reported = new Notifier();
  });

  afterEach(async () => {
    await informer?.stop();
    await fake.close();
  });

  it('lists in pages, delivers listed objects with the shape of watched ones, and says synced once', async () => {
    for (let i = 0; i < 1_203; i++) fake.create(service(`s-${i}`));
    start();
    await until(isSynced, 'synced');
    expect(names('added')).to.have.length(1_203);
    // LIST items carry no kind on the wire: they get the one the LIST names.
    expect(events[0]!.object).to.deep.include({ apiVersion: 'v1', kind: 'Service' });
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(3);
    fake.create(service('late'));
    fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 's-0' }, { metadata: { labels: { x: 'y' } } });
    fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 's-1' });
    await until(() => events.length === 1_206, 'watch events');
    expect(events.slice(-3).map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['added late', 'modified s-0', 'deleted s-1']);
    expect(events.at(-2)!.object.kind).to.equal('Service');
    expect(synced).to.equal(1);
  });

  it('keeps and delivers listed and watched objects as its transform makes them', async () => {
    fake.create(service('listed', { team: 'web' }));
    const seen: string[] = [];
    start(undefined, (object) => {
      seen.push(object.metadata.name);
      const { labels: _dropped, ...metadata } = object.metadata;
      return { ...object, metadata };
    });
    await until(isSynced, 'synced');
    fake.create(service('watched', { team: 'web' }));
    await until(() => events.length === 2, 'the watched object');
    expect(events.map((e) => e.object.metadata)).to.satisfy((all: KubeObject['metadata'][]) => all.every((metadata) => !('labels' in metadata)));
    // Normalised first (the LIST item got its kind), then transformed, once per object received.
    expect(events[0]!.object).to.deep.include({ apiVersion: 'v1', kind: 'Service' });
    expect(seen).to.deep.equal(['listed', 'watched']);
  });

  it('restarts after a failed LIST with backoff, and never later than a 429 asks', async () => {
    fake.create(service('a'));
    fake.faults.failNext(2, { verb: 'list', status: 500 });
    start();
    await until(isSynced, 'synced after two failed lists');
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
    await until(() => names('added').includes('b'), 'b after the throttled relist');
    expect(restarts.some((r) => r.delayMs >= 1_000 && /429|Too Many Requests/i.test(r.reason))).to.equal(true, JSON.stringify(restarts));
  });

  it('replaces a watch that went silent with a fresh LIST, delivering what it missed, deletions included', async () => {
    fake.create(service('kept'));
    fake.create(service('removed'));
    start();
    await until(isSynced, 'synced');
    fake.faults.stallWatches(true, 'services');
    fake.delete({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'removed' });
    fake.create(service('added-while-stalled'));
    // The watch stays silent (no events, no bookmarks): after the watchdog's second a fresh LIST brings both changes.
    await until(() => names('deleted').includes('removed') && names('added').includes('added-while-stalled'), 'the relist');
    expect(restarts.some((r) => /nothing received for 300000 ms/.test(r.reason))).to.equal(true);
    fake.faults.stallWatches(false, 'services');
    expect(names('added').filter((n) => n === 'kept')).to.have.length(1);
  });

  it('keeps a healthy quiet watch without relisting: the server ends each watch, a bookmark first, before the idle abort would cut it', async () => {
    fake.create(service('quiet'));
    start();
    await until(isSynced, 'synced');
    // Twenty 25 s watches: over eight minutes of server time, past the five-minute watchdog.
    await fake.requests.until({ verb: 'watch', resource: 'services' }, 20);
    expect(restarts).to.deep.equal([]);
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(1);
    const asked = new URLSearchParams(fake.requests.matching({ verb: 'watch', resource: 'services' })[0]!.query);
    expect([asked.get('timeoutSeconds'), asked.get('allowWatchBookmarks')]).to.deep.equal(['25', 'true']);
    expect(names('added')).to.deep.equal(['quiet']);
  });

  it('keeps a quiet watch on a server that sends no bookmarks: a watch the server ended by itself is a sign of life', async () => {
    fake.faults.withholdBookmarks(true);
    start();
    await until(isSynced, 'synced');
    // Ten 25 s watches and the growing waits before each reopen (1 s, 2 s... 30 s): past the five-minute watchdog.
    await fake.requests.until({ verb: 'watch', resource: 'services' }, 10);
    expect(restarts).to.deep.equal([]);
    expect(fake.requests.matching({ verb: 'list', resource: 'services' })).to.have.length(1);
  });

  it('treats a watch whose every reopen fails as deaf: restarts, then a fresh LIST once the watchdog sees no sign of life', async () => {
    fake.create(service('a'));
    start();
    await until(isSynced, 'synced');
    fake.faults.failNext(1_000, { verb: 'watch', status: 503 });
    fake.faults.dropWatches();
    fake.create(service('b'));
    await until(() => restarts.some((r) => /nothing received for 300000 ms/.test(r.reason)), 'the watchdog');
    expect(restarts.some((r) => /503|Service Unavailable/i.test(r.reason))).to.equal(true, JSON.stringify(restarts));
    // The fresh LIST brought what the failing watch could not.
    await until(() => names('added').includes('b'), 'b from the relist');
    fake.faults.reset();
  });

  it('treats an object leaving the label selector as deleted', async () => {
    fake.create(service('a', { tier: 'edge' }));
    start('tier=edge');
    await until(isSynced, 'synced');
    fake.patch({ apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'a' }, { metadata: { labels: { tier: 'core' } } });
    await until(() => names('deleted').includes('a'), 'a leaving the selection');
  });
});
