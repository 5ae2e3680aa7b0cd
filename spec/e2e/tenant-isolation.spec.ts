import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice, tlsSecret, type IngressOptions } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { OTHER_SHOP_CERT, OTHER_SHOP_KEY, WILDCARD_CERT, WILDCARD_KEY } from '../support/tls-refused-fixture.ts';

/**
 * Tenant isolation of host names, end to end with real TLS handshakes: a
 * host, its routes and its certificates belong to the namespace of the
 * oldest Ingress claiming it. Another namespace can neither have its
 * certificate served for that host (exactly, through a wildcard, or as the
 * default certificate) nor route its paths.
 */

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

function app(namespace: string, name: string, host: string, port: number, path: string, secretName?: string, options: IngressOptions = {}): string {
  return docs(
    ingress(name, host, [[path, 'Prefix', name, { number: 80 }]], secretName, { namespace, ...options }),
    service(name, [{ port: 80, targetPort: port }], namespace),
    slice(`${name}-1`, name, undefined, port, true, { namespace }),
  );
}

describe('tenant isolation of host names end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  it('3. never serves a certificate of namespace aaa for a host of namespace default, nor its routes, and hands the host over when its owner goes', async () => {
    harness = await LocalHarness.start({ manifests: {}, backends: 3 });
    const [shopPort, squatPort, freshPort] = harness.backends as [number, number, number];
    let mark = harness.mark();
    await harness.write(
      'default.yaml',
      docs(
        app('default', 'shop', 'shop.example.com', shopPort, '/', 'shop-tls', { created: '2024-01-01T00:00:00Z' }),
        tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY),
        ingress('plain', 'plain.example.com', [['/', 'Prefix', 'shop', { number: 80 }]], undefined, { created: '2024-01-01T00:00:00Z' }),
      ),
    );
    await harness.next(mark, 'deployed');
    await harness.untilHandshake('shop.example.com', fingerprint(LEAF_CERT));

    // A newer tenant: a TLS entry alone for the host (the takeover), a wildcard certificate, a route under the host,
    // and, in the same write, a new Ingress of the owner.
    mark = harness.mark();
    await harness.write(
      'aaa.yaml',
      docs(
        ingress('evil', undefined, [], 'evil-tls', { namespace: 'aaa', created: '2024-06-01T00:00:00Z', tlsHosts: ['shop.example.com'] }),
        tlsSecret('evil-tls', OTHER_SHOP_CERT, OTHER_SHOP_KEY, 'aaa'),
        ingress('wild', undefined, [], 'wild-tls', { namespace: 'aaa', created: '2024-06-01T00:00:00Z', tlsHosts: ['*.example.com'] }),
        tlsSecret('wild-tls', WILDCARD_CERT, WILDCARD_KEY, 'aaa'),
        app('aaa', 'squat', 'shop.example.com', squatPort, '/admin', undefined, { created: '2024-06-01T00:00:00Z' }),
        app('default', 'fresh', 'fresh.example.com', freshPort, '/', undefined, { created: '2024-06-01T00:00:00Z' }),
      ),
    );
    const deployed = await harness.next(mark, 'deployed');
    const render = harness.log.since(mark).find((o): o is Extract<Outcome, { type: 'rendered' }> => o.type === 'rendered' && o.revision === deployed.revision)!;
    expect(render.excluded.map((p) => `${p.object} ${p.field}: ${p.message}`)).to.deep.equal([
      'Ingress aaa/evil spec.tls[0].hosts[0]: host "shop.example.com" belongs to namespace default: older Ingress default/shop claims it; TLS entry not served for it',
      'Ingress aaa/squat spec.rules[0].host: host "shop.example.com" belongs to namespace default: older Ingress default/shop claims it; rule not served',
    ]);
    await harness.until('fresh.example.com', '/', [freshPort]);
    // The owner's certificate, whatever the crt-list order; the owner's routes, not the newcomer's.
    expect(await harness.handshake('shop.example.com')).to.equal(fingerprint(LEAF_CERT));
    await harness.until('shop.example.com', '/admin/x', [shopPort]);
    // A host of default without a certificate: neither aaa's wildcard nor any default certificate answers for it.
    expect(await harness.handshake('plain.example.com')).to.match(/^refused/);
    // A name nobody holds: aaa's wildcard serves it.
    expect(await harness.handshake('other.example.com')).to.equal(fingerprint(WILDCARD_CERT));

    // The owner goes: the host is aaa's now, routes and certificate alike.
    mark = harness.mark();
    await harness.write('default.yaml', app('default', 'fresh-only', 'fresh2.example.com', freshPort, '/', undefined, { created: '2024-01-01T00:00:00Z' }));
    await harness.next(mark, 'deployed');
    await harness.untilHandshake('shop.example.com', fingerprint(OTHER_SHOP_CERT));
    await harness.until('shop.example.com', '/admin/x', [squatPort]);
    expect(await harness.handshake('plain.example.com')).to.equal(fingerprint(WILDCARD_CERT));
  });

  it('lets namespaces on ingress.sharedHostNamespaces share a host', async () => {
    harness = await LocalHarness.start({
      manifests: {},
      backends: 2,
      config: (shipped) => shipped.replace('ingress:\n  className: haproxy\n', 'ingress:\n  className: haproxy\n  sharedHostNamespaces: [team-a, team-b]\n'),
    });
    const [a, b] = harness.backends as [number, number];
    const mark = harness.mark();
    await harness.write(
      'shared.yaml',
      docs(
        app('team-a', 'front', 'shop.example.com', a, '/', undefined, { created: '2024-01-01T00:00:00Z' }),
        app('team-b', 'api', 'shop.example.com', b, '/api', undefined, { created: '2024-06-01T00:00:00Z' }),
      ),
    );
    const rendered = await harness.next(mark, 'rendered');
    expect(rendered.excluded).to.deep.equal([]);
    await harness.next(mark, 'deployed');
    await harness.until('shop.example.com', '/api/x', [b]);
    await harness.until('shop.example.com', '/', [a]);
  });
});
