import { expect } from 'chai';
import { map, type Observable } from 'rxjs';
import { loadControllerConfig } from '../../lib/config/load.ts';
import { FirstSeen } from '../../lib/kube/first-seen.ts';
import { parseManifests, type FolderRead } from '../../lib/kube/manifests.ts';
import type { ResourceEvent } from '../../lib/pipeline/model.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import type { ReadResult } from '../../lib/kube/manifest-watchdog.ts';
import { manifestEvents } from '../../streams/manifest-events.ts';
import { testScheduler } from '../support/marbles.ts';

const loaded = loadControllerConfig('watchedResources:\n  services: { apiVersion: v1, kind: Service }\ntemplates: { haproxyConfig: global }\n');
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const { watchedResources: resources, ignoreFields } = loaded.config;

const folder = (text: string): FolderRead => ({ files: new Map([['app.yaml', parseManifests(text, 'app.yaml')]]), fingerprint: text });
const web = (port: number) => `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: ${port}}]}\n`;
const label = (event: ResourceEvent) => (event.type === 'synced' ? `synced ${event.kind}` : `${event.type} ${event.object.metadata.name}`);

describe('manifestEvents stage', () => {
  it('lists the folder on the first tick, then says synced, then emits only what changed', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Tick at 0 reads web:80 (added, then synced); tick at 4 reads web:81 (modified); tick at 8 reads the same (nothing).
      const ticks = hot('   t---t---t---|');
      const reads = [folder(web(80)), folder(web(81)), folder(web(81))];
      const read = cold('   -(r|)');
      const source = () => read.pipe(map(() => reads.shift()!));
      const expected = '    -(as)m------|';
      expectObservable(ticks.pipe(manifestEvents({ resources, ignoreFields, read: source, report: () => undefined }), map(label))).toBe(expected, {
        a: 'added web',
        s: 'synced services',
        m: 'modified web',
      });
    });
  });

  it('coalesces ticks that arrive while a read runs into one more read', () => {
    const reads: number[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Ticks at 1, 2 and 3 arrive during the first read (0-4): one more read follows, not three.
      const ticks = hot('   tttt----------|');
      const read = cold('   ----(r|)');
      const source = (): Observable<FolderRead> => read.pipe(map(() => (reads.push(reads.length), folder(web(80)))));
      const expected = '    ----(as)------|';
      expectObservable(ticks.pipe(manifestEvents({ resources, ignoreFields, read: source, report: () => undefined }), map(label))).toBe(expected, { a: 'added web', s: 'synced services' });
    });
    expect(reads).to.deep.equal([0, 1]);
  });

  it('reports a broken manifest and a failed read, keeps going, and syncs once a read succeeds', () => {
    const reports: Outcome[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // The first read fails (folder missing): reported, nothing emitted; the second succeeds; the
      // third finds app.yaml broken: reported, and web stays.
      const ticks = hot('   t--t--t--|');
      const failing = cold<FolderRead>('-#', {}, new Error('ENOENT: no such file or directory, scandir /m'));
      const reading = cold('-(r|)');
      let call = 0;
      const contents = [folder(web(80)), folder('kind: [')];
      const source = () => (call++ === 0 ? failing : reading.pipe(map(() => contents.shift()!)));
      const expected = '    ----(as)-|';
      expectObservable(ticks.pipe(manifestEvents({ resources, ignoreFields, read: source, report: (o) => reports.push(o) }), map(label))).toBe(expected, {
        a: 'added web',
        s: 'synced services',
      });
    });
    expect(reports.map((o) => (o.type === 'resourceError' ? o.error.split(':')[0] : o.type))).to.deep.equal(['manifests could not be read', 'app.yaml']);
  });

  it('emits and reports nothing for a read that finds the folder as last applied, and reports a failure once until it reads again', () => {
    const reports: Outcome[] = [];
    const results: string[] = [];
    testScheduler().run(({ cold, hot, expectObservable }) => {
      // Reads: broken (reported; the first read syncs), the same (nothing), failed twice (reported once), the same
      // again (nothing, not changed), then fixed (added), then failed again (reported again).
      const ticks = hot('   a-b-c-d-e-f-g-|');
      const expected = '    s---------w---|';
      const broken = folder('kind: [');
      const plan: (FolderRead | Error)[] = [broken, broken, new Error('ENOENT: gone'), new Error('ENOENT: gone'), broken, folder(web(80)), new Error('ENOENT: gone')];
      const read = () => {
        const next = plan.shift()!;
        return next instanceof Error ? cold<FolderRead>('#', {}, next) : cold('(r|)', { r: next });
      };
      const onRead = (tick: string, result: ReadResult) => results.push(`${tick} ${result.ok ? (result.changed ? 'changed' : 'same') : 'failed'}`);
      expectObservable(ticks.pipe(manifestEvents({ resources, ignoreFields, read, report: (o) => reports.push(o), onRead }), map(label))).toBe(expected, {
        w: 'added web',
        s: 'synced services',
      });
    });
    expect(reports.map((o) => (o.type === 'resourceError' ? o.error.split(':')[0] : o.type))).to.deep.equal(['app.yaml', 'manifests could not be read', 'manifests could not be read']);
    expect(results).to.deep.equal(['a same', 'b same', 'c failed', 'd failed', 'e same', 'f changed', 'g failed']);
  });

  it('stamps objects with the time they were first seen, stores the record before emitting them, and serves them when the store fails', () => {
    const stored: Readonly<Record<string, string>>[] = [];
    const reports: Outcome[] = [];
    const events: ResourceEvent[] = [];
    const scheduler = testScheduler();
    scheduler.run(({ cold, hot, expectObservable }) => {
      // 0: web first seen: the record is stored (2 frames), then web emitted. 10: api is new: the store fails
      // at once, is reported, and api is emitted all the same. 20: web:81 adds nothing to the record: nothing stored.
      const ticks = hot('   t 9ms t 9ms t 9ms |');
      const api = web(80).replace('web', 'api');
      const reads = [folder(web(80)), folder(`${web(80)}---\n${api}`), folder(`${web(81)}---\n${api}`)];
      const source = () => cold('(r|)').pipe(map(() => reads.shift()!));
      const stores = [cold('--(x|)'), cold<unknown>('#', undefined, new Error('EACCES: first-seen.json'))];
      const remember = (state: FirstSeen) => (stored.push(state.record()), stores.shift()!);
      const expected = '    --(as) 4ms b 9ms m 9ms |';
      const stage = manifestEvents({
        resources,
        ignoreFields,
        read: source,
        report: (o) => void reports.push(o),
        firstSeen: { state: new FirstSeen(), remember, now: () => scheduler.now() },
      });
      expectObservable(
        ticks.pipe(
          stage,
          map((e) => (events.push(e), label(e))),
        ),
      ).toBe(expected, { a: 'added web', s: 'synced services', b: 'added api', m: 'modified web' });
    });
    expect(stored.map((r) => Object.keys(r))).to.deep.equal([['services default/web'], ['services default/api', 'services default/web']]);
    expect(reports).to.deep.equal([{ type: 'resourceError', error: 'the order in which objects were first seen could not be stored: EACCES: first-seen.json' }]);
    const stamps = events.flatMap((e) => (e.type === 'synced' ? [] : [`${e.object.metadata.name} ${String(e.object.metadata['creationTimestamp'])}`]));
    expect(stamps).to.deep.equal(['web 1970-01-01T00:00:00.000Z', 'api 1970-01-01T00:00:00.010Z', 'web 1970-01-01T00:00:00.000Z']);
  });
});
