import { expect } from 'chai';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyBinary } from '../../lib/haproxy/check.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice } from '../support/manifest-builders.ts';
import type { Deployed } from '../support/traffic.ts';

/**
 * runtimeFirst end to end (docs/adr/0022-runtime-first.md): a real HAProxy,
 * real HTTP to real backends on loopback. `haproxy -c` runs through a
 * wrapper that, while a `hold` file exists, waits before checking, and while
 * a `refuse` file exists, refuses the configuration as HAProxy does (exit 1,
 * an alert): the validation's end and verdict are the test's to choose. A
 * runtime-only change HAProxy itself refuses reaches the runtime refused too
 * (a certificate that does not parse fails `set ssl cert` as it fails the
 * check), which the converger already turns into a reload the master
 * refuses; the wrapper reaches the revert path with every runtime operation
 * applied. The files in HAProxy's work directory say the last valid
 * configuration until the verdict: a valid one writes them, a refused one
 * never does.
 */
describe('local mode, runtimeFirst: runtime-only changes served while haproxy -c runs', function () {
  this.timeout(60_000);
  let harness: LocalHarness | undefined;
  let dir: string;
  let saved: string | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runtime-first-'));
    const hold = join(dir, 'hold');
    const refuse = join(dir, 'refuse');
    const wrapper = join(dir, 'haproxy');
    await writeFile(
      wrapper,
      [
        '#!/bin/sh',
        'if [ "$1" = "-c" ]; then',
        `  while [ -e '${hold}' ]; do sleep 0.02; done`,
        `  if [ -e '${refuse}' ]; then echo "[ALERT]    (1) : config : refused by the test's wrapper" >&2; exit 1; fi`,
        'fi',
        `exec '${haproxyBinary()}' "$@"`,
        '',
      ].join('\n'),
    );
    await chmod(wrapper, 0o755);
    saved = process.env['HAPROXY_BIN'];
    process.env['HAPROXY_BIN'] = wrapper;
  });

  afterEach(async () => {
    await rm(join(dir, 'hold'), { force: true });
    await harness?.stop();
    harness = undefined;
    if (saved === undefined) delete process.env['HAPROXY_BIN'];
    else process.env['HAPROXY_BIN'] = saved;
    await rm(dir, { recursive: true, force: true });
  });

  /** The files a deploy writes in HAProxy's work directory, by path: haproxy.cfg and the maps, certificates and general files below it. */
  async function onDisk(workDir: string): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const entry of await readdir(workDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || (entry.parentPath === workDir && entry.name !== 'haproxy.cfg')) continue;
      const path = join(entry.parentPath, entry.name);
      found.set(path, await readFile(path, 'utf8'));
    }
    return found;
  }

  /** Whether any file on disk names the server at `port`. */
  const names = (files: Map<string, string>, port: number) => [...files.values()].some((text) => text.includes(`:${port}`));

  /** The shop, / to web with one endpoint, with runtimeFirst on. */
  async function shop(): Promise<LocalHarness> {
    const started = await LocalHarness.start({ manifests: {}, backends: 2, config: (shipped) => `${shipped}\nruntimeFirst: true\n` });
    const [web] = started.backends as [number];
    const mark = started.mark();
    await started.write('shop.yaml', docs(ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { number: 80 }]]), service('web', [{ port: 80, targetPort: web }])));
    await started.write('web-1.yaml', slice('web-1', 'web', undefined, web));
    await started.next(mark, 'deployed');
    await started.until('shop.example.com', '/', [web]);
    await started.settled();
    return started;
  }

  it('serves an endpoint added before its validation ends, with no reload, and writes its files once it is valid', async () => {
    harness = await shop();
    const [web, second] = harness.backends as [number, number];
    const reloads = await harness.reloads();
    const valid = await onDisk(harness.workDir);
    expect(names(valid, web)).to.equal(true);
    await writeFile(join(dir, 'hold'), '');
    const mark = harness.mark();
    await harness.write('web-2.yaml', slice('web-2', 'web', undefined, second));
    const early = await harness.next(mark, 'runtimeFirst');
    // Served while the check is still held: no verdict for it can exist yet.
    await harness.until('shop.example.com', '/', [web, second]);
    await harness.log.waitFor(mark, (o): o is Deployed => o.type === 'deployed' && o.hash === early.hash, 'deployment before the verdict');
    expect(harness.log.since(mark).filter((o) => o.type === 'validated' || o.type === 'validationFailed')).to.deep.equal([]);
    // Deployed, and its files not written: the work directory still holds the last valid configuration.
    expect(await onDisk(harness.workDir)).to.deep.equal(valid);
    await rm(join(dir, 'hold'));
    expect((await harness.next(mark, 'validated')).hash).to.equal(early.hash);
    // Deployed again once valid, as a confirmation: nothing left to apply, its files written.
    const confirmed = await harness.log.waitFor(mark, (o): o is Deployed => o.type === 'deployed' && o.reason === 'confirmed', 'the confirmation written');
    expect(
      harness.log
        .since(mark)
        .filter((o) => o.type === 'deployed')
        .map((o) => [o.hash, o.reason, o.result.mode]),
    ).to.deep.equal([
      [early.hash, 'change', 'runtime'],
      [early.hash, 'confirmed', 'persisted'],
    ]);
    expect(confirmed.latencyMs).to.equal(undefined);
    const written = await onDisk(harness.workDir);
    expect(names(written, second)).to.equal(true);
    expect(harness.log.since(mark).some((o) => o.type === 'runtimeReverted')).to.equal(false);
    await harness.until('shop.example.com', '/', [web, second]);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('undoes a runtime-only change whose validation fails, at runtime, and reports the failure', async () => {
    harness = await shop();
    const [web, second] = harness.backends as [number, number];
    const reloads = await harness.reloads();
    const valid = await onDisk(harness.workDir);
    await writeFile(join(dir, 'hold'), '');
    await writeFile(join(dir, 'refuse'), '');
    const mark = harness.mark();
    await harness.write('web-2.yaml', slice('web-2', 'web', undefined, second));
    const early = await harness.next(mark, 'runtimeFirst');
    await harness.until('shop.example.com', '/', [web, second]);
    expect(await onDisk(harness.workDir)).to.deep.equal(valid);
    await rm(join(dir, 'hold'));
    const failed = await harness.next(mark, 'validationFailed');
    expect(failed.hash).to.equal(early.hash);
    expect(failed.error).to.include("refused by the test's wrapper");
    const reverted = await harness.next(mark, 'runtimeReverted');
    expect(reverted.hash).to.equal(early.hash);
    await harness.until('shop.example.com', '/', [web]);
    const revert = await harness.log.waitFor(mark, (o): o is Deployed => o.type === 'deployed' && o.hash === reverted.to, 'the revert deployed');
    expect(revert.result.mode).to.equal('runtime');
    // The files never held the refused configuration; the revert, planned back at runtime, had nothing to write.
    expect(await onDisk(harness.workDir)).to.deep.equal(valid);
    expect(harness.log.since(mark).some((o) => o.type === 'deployed' && o.reason === 'confirmed')).to.equal(false);
    expect(await harness.reloads()).to.equal(reloads);
  });
});
