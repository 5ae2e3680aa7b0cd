import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { FirstSeenStore } from '../../lib/kube/first-seen-store.ts';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice, tlsSecret, type IngressOptions } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { OTHER_SHOP_CERT, OTHER_SHOP_KEY } from '../support/tls-refused-fixture.ts';

type Rendered = Extract<Outcome, { type: 'rendered' }>;
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/**
 * Host ownership in local mode, where manifests carry no creationTimestamp:
 * the Ingress seen first keeps its host and certificate against a newcomer
 * of a namespace that sorts before it, across a restart of the controller
 * too (the order is kept in the work dir), and a creationTimestamp a
 * manifest carries is honoured. Checked with real TLS handshakes (SNI) on
 * a real HAProxy.
 */
describe('local mode: the Ingress seen first keeps its host', function () {
  this.timeout(90_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  const shop = (port: number) =>
    docs(
      ingress('web', 'shop.example.test', [['/', 'Prefix', 'web', { number: 80 }]], 'shop-tls', { namespace: 'shop' }),
      service('web', [{ port: 80, targetPort: port }], 'shop'),
      slice('web-1', 'web', undefined, port, true, { namespace: 'shop' }),
      tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY, 'shop'),
    );
  /** Only a TLS entry for shop.example.test, with a certificate of its own: a takeover of the name. */
  const newcomer = (options: Omit<IngressOptions, 'namespace' | 'tlsHosts'> = {}) =>
    docs(
      ingress('newcomer', undefined, [], 'newcomer-tls', { namespace: 'aaa', tlsHosts: ['shop.example.test'], ...options }),
      tlsSecret('newcomer-tls', OTHER_SHOP_CERT, OTHER_SHOP_KEY, 'aaa'),
    );
  const refusal = 'Ingress aaa/newcomer spec.tls[0].hosts[0]: host "shop.example.test" belongs to namespace shop: older Ingress shop/web claims it; TLS entry not served for it';
  /** The refusals of the first render at or after `mark` that names one, once the newest configuration is deployed. */
  async function refusalsFrom(h: LocalHarness, mark: number): Promise<string[]> {
    const rendered = await h.log.waitFor(mark, (o): o is Rendered => o.type === 'rendered' && o.excluded.some((p) => p.object === 'Ingress aaa/newcomer'), 'the newcomer refused', 15_000);
    await h.settled();
    return rendered.excluded.map((p) => `${p.object} ${p.field}: ${p.message}`);
  }

  /** Local mode serving shop.example.test with namespace shop's certificate. */
  async function shopServing(): Promise<LocalHarness> {
    const started = await LocalHarness.start({ manifests: {}, backends: 1 });
    const mark = started.mark();
    await started.write('shop.yaml', shop(started.backends[0]!));
    await started.next(mark, 'deployed');
    await started.untilHandshake('shop.example.test', fingerprint(LEAF_CERT));
    return started;
  }

  it('refuses a newcomer of namespace aaa the TLS host of namespace shop, and keeps refusing it after a restart', async () => {
    harness = await shopServing();
    const [web] = harness.backends as [number];
    const mark = harness.mark();
    await harness.write('aaa.yaml', newcomer());
    expect(await refusalsFrom(harness, mark)).to.deep.equal([refusal]);
    expect(await harness.handshake('shop.example.test')).to.equal(fingerprint(LEAF_CERT));
    await harness.until('shop.example.test', '/', [web]);

    // Started again on the same work dir, with both manifests there from the first read.
    const first = harness;
    const files = { 'shop.yaml': shop(web), 'aaa.yaml': newcomer() };
    await first.stop({ keepBackends: true });
    try {
      harness = await LocalHarness.start({ manifests: files, backends: 1, workDir: first.workDir }, first.backends);
      expect(await refusalsFrom(harness, 0)).to.deep.equal([refusal]);
      expect(await harness.handshake('shop.example.test')).to.equal(fingerprint(LEAF_CERT));
      await harness.until('shop.example.test', '/', [web]);
      const record = (await new FirstSeenStore(join(first.workDir, 'first-seen.json')).load()).record();
      expect(Date.parse(record['ingresses shop/web']!)).to.be.below(Date.parse(record['ingresses aaa/newcomer']!));
    } finally {
      await first.stopBackends();
    }
  });

  it("honours a creationTimestamp the manifest carries: an older newcomer's certificate is served", async () => {
    harness = await shopServing();
    const mark = harness.mark();
    await harness.write('aaa.yaml', newcomer({ created: '2020-01-01T00:00:00Z' }));
    const rendered = await harness.log.waitFor(
      mark,
      (o): o is Rendered => o.type === 'rendered' && o.excluded.some((p) => p.object === 'Ingress shop/web'),
      'the first Ingress refused',
      15_000,
    );
    expect(rendered.excluded.map((p) => `${p.object} ${p.field}: ${p.message}`)).to.include(
      'Ingress shop/web spec.tls[0].hosts[0]: host "shop.example.test" belongs to namespace aaa: older Ingress aaa/newcomer claims it; TLS entry not served for it',
    );
    await harness.untilHandshake('shop.example.test', fingerprint(OTHER_SHOP_CERT));
  });
});
