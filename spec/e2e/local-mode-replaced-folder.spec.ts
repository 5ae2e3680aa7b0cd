import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice } from '../support/manifest-builders.ts';

const run = promisify(execFile);
type Rendered = Extract<Outcome, { type: 'rendered' }>;
const ROUNDS = 60;

/**
 * A manifest folder replaced by a copy of itself (`mv folder folder.bak &&
 * cp -r folder.bak folder`), then a new Ingress written into the copy: the
 * docs/guides/local-mode.md promises a second or two. A miss was seen once in five tries;
 * chokidar alone missed 2 of 60 (docs/manifest-watching.md). The case is
 * repeated 60 times, the new file written 0 to 21 ms after the copy (where
 * chokidar's misses were), each served within 2 s as measured by the awaited
 * render, not by a pause.
 */
describe('local mode follows a manifest folder replaced by a copy of itself', function () {
  this.timeout(180_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  it(`serves an Ingress written into the copy within 2 s, ${ROUNDS} times in a row`, async () => {
    harness = await LocalHarness.start({ manifests: {}, backends: 1 });
    const h = harness;
    const [web] = h.backends as [number];
    let mark = h.mark();
    await h.write('web.yaml', docs(service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }]), slice('web-1', 'web', 'http', web)));
    await h.write('shop.yaml', ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { name: 'http' }]]));
    await h.next(mark, 'deployed');
    await h.until('shop.example.com', '/', [web]);
    const folder = h.manifestDir;
    for (let round = 0; round < ROUNDS; round++) {
      // A controller at rest, as a user at a shell finds it.
      await h.settled();
      await run('sh', ['-c', 'mv "$1" "$1.bak" && cp -r "$1.bak" "$1"', 'sh', folder]);
      // How soon after the copy the user writes: part of the case, not a wait for anything.
      const after = (round % 8) * 3;
      if (after > 0) await new Promise((resolve) => setTimeout(resolve, after));
      mark = h.mark();
      const host = `store-${round}.example.com`;
      await h.write(`store-${round}.yaml`, ingress(`store-${round}`, host, [['/', 'Prefix', 'web', { name: 'http' }]]));
      const written = Date.now();
      await h.log
        .waitFor(mark, (o): o is Rendered => o.type === 'rendered' && Object.values(o.files.maps).some((map) => map.includes(host)), `round ${round}: ${host} rendered`, 2_000)
        .catch((error: unknown) => {
          throw new Error(`round ${round} (written ${after} ms after the copy): not rendered within 2 s (${Date.now() - written} ms)`, { cause: error });
        });
      await rm(`${folder}.bak`, { recursive: true });
    }
    await h.settled();
    await h.until(`store-${ROUNDS - 1}.example.com`, '/', [web]);
  });
});
