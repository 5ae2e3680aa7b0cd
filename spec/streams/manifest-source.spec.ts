import { expect } from 'chai';
import { defer, map, of, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { loadControllerConfig } from '../../lib/config/load.ts';
import { parseManifests, type FolderRead } from '../../lib/kube/manifests.ts';
import type { ResourceEvent } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import type { WatchdogEvent } from '../../lib/kube/manifest-watchdog.ts';
import { manifestSource } from '../../streams/manifest-source.ts';
import type { WatchSignal } from '../../streams/watch-path.ts';
import { testScheduler } from '../support/marbles.ts';

const loaded = loadControllerConfig('watchedResources:\n  services: { apiVersion: v1, kind: Service }\ntemplates: { haproxyConfig: global }\n');
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const { watchedResources: resources, ignoreFields } = loaded.config;

const web = (port: number) => `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: ${port}}]}\n`;
const folder = (text: string): FolderRead => ({ files: new Map([['app.yaml', parseManifests(text, 'app.yaml')]]), fingerprint: text });
const label = (event: ResourceEvent) => (event.type === 'synced' ? `synced ${event.kind}` : `${event.type} ${event.object.metadata.name}`);
const values = { a: 'added web', s: 'synced services', m: 'modified web' };
const signals: Record<string, WatchSignal> = { r: 'ready', c: 'change' };

/**
 * Runs the source over a folder holding web:80 until `changeAt` and web:81
 * from then on, with the watch given; returns the watchdog's log ("frame event").
 */
function run(scheduler: TestScheduler, watch: () => Observable<WatchSignal>, changeAt: number, reports: Outcome[] = []) {
  const watchdog: string[] = [];
  const source = manifestSource({
    folder: 'm',
    resources,
    ignoreFields,
    watch,
    read: () => defer(() => of(folder(web(scheduler.now() < changeAt ? 80 : 81)))),
    settleMs: 1,
    rereadMs: 10,
    retryMs: 5,
    graceMs: 3,
    report: (outcome) => reports.push(outcome),
    watchdog: (event: WatchdogEvent) =>
      watchdog.push(`${scheduler.now()} ${event.type === 'read' ? (event.result.ok ? (event.result.changed ? 'changed' : 'same') : 'failed') : event.type}`),
    scheduler,
  });
  return { events: source.pipe(map(label)), watchdog };
}

describe('manifestSource stage', () => {
  it('reads at once when the watch is set up, after each change it reports, and on every re-read', () => {
    let log: string[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // Ready at 0 (read at 1: added, synced); a change at 5, reported at 5 (read at 6: modified);
      // re-reads at 10 and 20 find nothing new.
      const watch = cold<WatchSignal>('r----c', signals);
      const { events, watchdog } = run(scheduler, () => watch, 5);
      log = watchdog;
      expectObservable(events, '^ 24ms !').toBe('-(as)-m', values);
      expectSubscriptions(watch.subscriptions).toBe('^ 24ms !');
    });
    expect(log).to.deep.equal(['0 started', '0 watching', '1 same', '6 changed', '10 same', '20 same', '25 stopped']);
  });

  it('sets up a watch anew when a re-read finds a change it never reported, and says so', () => {
    let log: string[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // A deaf watch: ready, then silent. The change at 12 is found by the re-read at 20; nothing
      // announces it within the grace (3): at 23 the watch is replaced, and the new one reads at once (24).
      const watch = cold<WatchSignal>('r', signals);
      const { events, watchdog } = run(scheduler, () => watch, 12);
      log = watchdog;
      expectObservable(events, '^ 34ms !').toBe('-(as) 15ms m', values);
      expectSubscriptions(watch.subscriptions).toBe(['^ 22ms !', '23ms ^ 11ms !']);
    });
    expect(log).to.deep.equal(['0 started', '0 watching', '1 same', '10 same', '20 changed', '23 missed', '23 watching', '24 same', '30 same', '35 stopped']);
  });

  it('trusts a watch whose report of a change comes just after the re-read found it', () => {
    let log: string[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // The change at 9 is reported at 11, after the re-read at 10 found it: within the grace, so the watch stays.
      const watch = cold<WatchSignal>('r----------c', signals);
      const { events, watchdog } = run(scheduler, () => watch, 9);
      log = watchdog;
      expectObservable(events, '^ 24ms !').toBe('-(as) 5ms m', values);
      expectSubscriptions(watch.subscriptions).toBe('^ 24ms !');
    });
    expect(log).to.deep.equal(['0 started', '0 watching', '1 same', '10 changed', '12 same', '20 same', '25 stopped']);
  });

  it('reports a failed watch, reads anyway, and sets it up again after the retry delay', () => {
    let log: string[] = [];
    const reports: Outcome[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      // The watch fails at 3; at 8 a new one is set up, and the folder is read at once (9).
      const watch = cold<WatchSignal>('r--#', signals, new Error('ENOSPC: System limit for number of file watchers reached'));
      const { events, watchdog } = run(scheduler, () => watch, 100, reports);
      log = watchdog;
      expectObservable(events, '^ 9ms !').toBe('-(as)', values);
      expectSubscriptions(watch.subscriptions).toBe(['^--!', '8ms ^ 1ms !']);
    });
    expect(log).to.deep.equal(['0 started', '0 watching', '1 same', '3 watchFailed', '8 watching', '9 same', '10 stopped']);
    expect(reports).to.deep.equal([{ type: 'resourceError', error: 'watching m failed: ENOSPC: System limit for number of file watchers reached; trying again in 0.005 s' }]);
  });
  it('reads a file the watch names at once, quickly, and every file named since once changes settle; a file gone only then', () => {
    const reads: string[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      // Ready at 0: the whole folder at 3 (settle 3). x written at 8 and y at 10: each read quickly at once (x's
      // change is served at 8), both again at 13 (settled); x gone at 16: read at 19 alone, settled.
      const changes: Record<string, WatchSignal> = { r: 'ready', x: { path: 'm/x.yaml', gone: false }, y: { path: 'm/y.yaml', gone: false }, g: { path: 'm/x.yaml', gone: true } };
      const watch = cold<WatchSignal>('r-------x-y-----g', changes);
      const events = manifestSource({
        folder: 'm',
        resources,
        ignoreFields,
        watch: () => watch,
        read: (named) =>
          defer(() => {
            reads.push(`${scheduler.now()} ${named ? `${named.quick ? 'quick' : 'settled'} ${named.paths.join(' ')}` : 'whole'}`);
            return of(folder(web(scheduler.now() < 8 ? 80 : 81)));
          }),
        settleMs: 3,
        rereadMs: 100,
        retryMs: 5,
        graceMs: 3,
        report: () => undefined,
        watchdog: () => undefined,
        scheduler,
      }).pipe(map(label));
      expectObservable(events, '^ 21ms !').toBe('---(as)-m', values);
    });
    expect(reads).to.deep.equal(['3 whole', '8 quick m/x.yaml', '10 quick m/y.yaml', '13 settled m/x.yaml m/y.yaml', '19 settled m/x.yaml']);
  });
});
