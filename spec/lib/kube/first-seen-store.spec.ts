import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FirstSeen } from '../../../lib/kube/first-seen.ts';
import { FirstSeenStore } from '../../../lib/kube/first-seen-store.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

const object = (name: string): KubeObject => ({ kind: 'Ingress', metadata: { name, namespace: 'shop' } });
const stamp = (seen: FirstSeen, name: string, at: number) => seen.stamp(`ingresses shop/${name}`, object(name), at);

describe('first seen store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'first-seen-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends each change to the journal, and a store loaded again holds the record as it was', async () => {
    const path = join(dir, 'first-seen.json');
    const store = new FirstSeenStore(path);
    const seen = await store.load();
    stamp(seen, 'web', 1_000);
    await store.store(seen);
    stamp(seen, 'api', 2_000);
    seen.forget('ingresses shop/web');
    await store.store(seen);
    // Small changes touch the journal alone.
    expect(await stat(path).catch(() => undefined)).to.equal(undefined);
    expect((await readFile(`${path}.journal`, 'utf8')).split('\n')).to.have.length(4);
    expect((await new FirstSeenStore(path).load()).record()).to.deep.equal(seen.record());
  });

  it('writes the whole record once the journal outgrows it, then empties the journal', async () => {
    const path = join(dir, 'first-seen.json');
    const store = new FirstSeenStore(path);
    const seen = await store.load();
    stamp(seen, 'web', 1_000);
    // Each object first seen and forgotten again: the journal grows, the record does not.
    for (let i = 0; (await stat(path).catch(() => undefined)) === undefined; i++) {
      expect(i, 'the journal is folded in after at most 64 KiB').to.be.below(1_000);
      stamp(seen, `churn-${i}`, 2_000 + i);
      seen.forget(`ingresses shop/churn-${i}`);
      await store.store(seen);
    }
    expect(JSON.parse(await readFile(path, 'utf8'))).to.deep.equal({ 'ingresses shop/web': '1970-01-01T00:00:01.000Z' });
    expect(await readFile(`${path}.journal`, 'utf8')).to.equal('');
    expect((await new FirstSeenStore(path).load()).record()).to.deep.equal(seen.record());
  });

  it('writes the whole record at the next store after a store failed, so what the failed one held is not lost', async () => {
    const path = join(dir, 'first-seen.json');
    const store = new FirstSeenStore(path);
    const seen = await store.load();
    // A folder where the journal goes: appending fails, as root too.
    await mkdir(`${path}.journal`);
    stamp(seen, 'web', 1_000);
    const failed = await store.store(seen).then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(failed).to.equal('EISDIR');
    await rm(`${path}.journal`, { recursive: true });
    stamp(seen, 'api', 2_000);
    await store.store(seen);
    expect((await new FirstSeenStore(path).load()).record()).to.deep.equal(seen.record());
  });
});
