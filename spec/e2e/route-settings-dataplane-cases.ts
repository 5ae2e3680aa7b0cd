/**
 * Route policies through the Data Plane API (the emulator of
 * spec/support/dataplane-emulator, or a real dataplaneapi, in front of a
 * real HAProxy, as in dataplane-acceptance-cases.ts): a route whose settings a served route
 * already has is a runtime map entry "<backend>:<policy>", no reload; a new
 * distinct policy is configuration, one reload.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { DataplaneLocal, DATAPLANE_POD } from '../support/dataplane-local.ts';
import type { PeerKind } from '../support/dataplane-peer.ts';
import { documents, ingress, service, slice } from '../support/manifest-builders.ts';

const redirect301 = { 'haproxy.org/ssl-redirect': 'true', 'haproxy.org/ssl-redirect-code': '301' };

function redirectOf(port: number, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: DATAPLANE_POD.address, port, path, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(`${res.statusCode} ${res.headers.location ?? ''}`));
    });
    req.on('error', reject);
    req.end();
  });
}

const routed = (name: string, host: string, annotations?: Record<string, string>) =>
  ingress(name, host, [['/', 'Prefix', 'web', { number: 80 }]], undefined, annotations ? { annotations } : {});

/** The cases against the Data Plane API `kind` starts, standing for a pod. */
export function describeRoutePolicies(kind: PeerKind): void {
  describe(`route policies through the Data Plane API: ${kind.name}`, function () {
    this.timeout(90_000);
    let local: DataplaneLocal;
    let web = 0;

    before(async () => {
      local = await DataplaneLocal.start(
        1,
        ([port]) => ({
          'web.yaml': documents(
            service('web', [{ port: 80, targetPort: port! }]),
            slice('web-0', 'web', undefined, port!),
            routed('a', 'a.example.com', redirect301),
            routed('plain', 'plain.example.com'),
          ),
        }),
        'route-policies-',
        kind,
      );
      [web] = local.backends as [number];
      expect((await local.deployed(0)).result.mode).to.equal('reload');
      await local.served('plain.example.com', [web]);
      expect(await redirectOf(local.httpPort, 'a.example.com', '/x')).to.equal('301 https://a.example.com/x');
    });

    after(() => local?.stop());

    it('serves routes with an existing policy, or none, through runtime map entries: no reload', async () => {
      const before = await local.reloads();
      const from = local.log.mark();
      await local.write('more.yaml', documents(routed('b', 'b.example.com', redirect301), routed('c', 'c.example.com')));
      expect((await local.deployed(from)).result.mode).to.equal('runtime');
      expect(await redirectOf(local.httpPort, 'b.example.com', '/y?z=1')).to.equal('301 https://b.example.com/y?z=1');
      await local.served('c.example.com', [web]);
      expect(await local.reloads()).to.equal(before);
    });

    it('renders a new distinct policy as configuration: one reload', async () => {
      const before = await local.reloads();
      const from = local.log.mark();
      await local.write('other.yaml', routed('d', 'd.example.com', { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' }));
      const result = (await local.deployed(from)).result;
      expect(result.mode).to.equal('reload');
      expect(await redirectOf(local.httpPort, 'd.example.com', '/')).to.equal('308 https://d.example.com/');
      expect(await local.reloads()).to.equal(before + 1);
    });
  });
}
