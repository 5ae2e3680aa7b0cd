import { expect } from 'chai';
import { ManifestWatchdog } from '../../../lib/kube/manifest-watchdog.ts';

describe('ManifestWatchdog', () => {
  let now = 0;
  const watchdog = () => new ManifestWatchdog({ folder: '/m', staleAfterMs: 30_000, now: () => now });

  it('finds nothing wrong while no source runs, or while it watches and reads', () => {
    now = 0;
    const dog = watchdog();
    now = 100_000;
    expect(dog.problem()).to.equal(undefined);
    dog.apply({ type: 'started' });
    dog.apply({ type: 'watching' });
    dog.apply({ type: 'read', result: { ok: true, changed: false } });
    now += 29_000;
    expect(dog.problem()).to.equal(undefined);
  });

  it('names a folder that can no longer be read until it reads again; one missing from the start is for readiness', () => {
    now = 0;
    const dog = watchdog();
    dog.apply({ type: 'started' });
    dog.apply({ type: 'read', result: { ok: false, error: 'manifests could not be read: ENOENT' } });
    expect(dog.problem()).to.equal(undefined);
    dog.apply({ type: 'read', result: { ok: true, changed: false } });
    dog.apply({ type: 'read', result: { ok: false, error: "manifests could not be read: ENOENT: no such file or directory, scandir '/m'" } });
    expect(dog.problem()).to.equal("manifests could not be read: ENOENT: no such file or directory, scandir '/m' (the last configuration keeps serving)");
    dog.apply({ type: 'read', result: { ok: true, changed: true } });
    expect(dog.problem()).to.equal(undefined);
  });

  it('names a failed watch until one is set up again', () => {
    now = 0;
    const dog = watchdog();
    dog.apply({ type: 'started' });
    dog.apply({ type: 'watchFailed', error: 'watching /m failed: ENOSPC; trying again in 1 s' });
    expect(dog.problem()).to.equal('watching /m failed: ENOSPC; trying again in 1 s');
    dog.apply({ type: 'watching' });
    expect(dog.problem()).to.equal(undefined);
  });

  it('says so when reads stopped happening, and forgets everything when the source stops', () => {
    now = 0;
    const dog = watchdog();
    dog.apply({ type: 'started' });
    dog.apply({ type: 'read', result: { ok: true, changed: false } });
    now = 31_000;
    expect(dog.problem()).to.equal('manifests /m not read for 31 s');
    dog.apply({ type: 'watchFailed', error: 'watching /m failed' });
    dog.apply({ type: 'stopped' });
    expect(dog.problem()).to.equal(undefined);
  });
});
