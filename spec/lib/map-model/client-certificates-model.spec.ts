import { expect } from 'chai';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import { base64, CA_CERT, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service, sources, tlsSecret, type World } from '../ingress/fixtures.ts';

const N = 'nginx.ingress.kubernetes.io/';
const web = service('web', [{ name: 'http', port: 80, targetPort: 8080 }]);
const webSlice = endpointSlice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }]);
const site = tlsSecret('site', SELF_SIGNED_CERT, SELF_SIGNED_KEY);

function caSecret(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: 'default' }, data };
}

/** An Ingress for `host` over TLS with the Secret "site", asking for client certificates when `ca` is given. */
function tlsIngress(name: string, host: string, ca?: string, created?: string) {
  return ingress(name, {
    ...(created === undefined ? {} : { created }),
    ...(ca === undefined ? {} : { annotations: { [`${N}auth-tls-secret`]: ca } }),
    rules: [rule(host, path('/', 'web', 80))],
    tls: [{ hosts: [host], secretName: 'site' }],
  });
}

const world = (more: World): World => ({ services: [web], slices: [webSlice], ...more, secrets: [site, ...(more.secrets ?? [])] });

describe('client certificates in the Ingress model', () => {
  it('asks for them on the crt-list line of the hosts that want them alone: the other hosts of the same Secret get a line of their own', () => {
    const model = buildMapModel(
      sources(
        world({ secrets: [caSecret('client-ca', { 'ca.crt': base64(CA_CERT) })], ingresses: [tlsIngress('secure', 'a.example.com', 'client-ca'), tlsIngress('open', 'b.example.com')] }),
      ),
    );
    expect(model.certificates.map((line) => [line.hosts, line.clientCaFile])).to.deep.equal([
      [['b.example.com'], undefined],
      [['a.example.com'], 'default_client-ca__client-ca.pem'],
    ]);
    expect(model.clientCertificates).to.equal(true);
    expect(model.caCertificates).to.deep.equal([{ file: 'default_client-ca__client-ca.pem', pem: CA_CERT }]);
    const policy = model.policies.find((candidate) => candidate.clientCertificate !== undefined)!;
    expect(policy.clientCertificate).to.deep.equal({ required: true, verified: true, errorPage: undefined, passCertificate: false, overTlsOnly: false });
    expect(model.warnings).to.deep.equal([]);
  });

  it('stands a CA nobody holds the key of in for a missing or unusable CA Secret, naming the Ingress: every certificate fails, none passes unchecked', () => {
    const missing = buildMapModel(sources(world({ ingresses: [tlsIngress('secure', 'a.example.com', 'absent')] })));
    expect(missing.caCertificates.map((ca) => ca.file)).to.deep.equal(['default_absent__client-ca.pem']);
    expect(missing.caCertificates[0]!.pem)
      .to.match(/^-----BEGIN CERTIFICATE-----\n/)
      .and.not.equal(CA_CERT);
    expect(missing.warnings).to.deep.equal([
      { object: 'Ingress default/secure', field: 'metadata.annotations', message: 'Secret default/absent not found: its client certificate authentication refuses every certificate' },
    ]);
    const revoking = buildMapModel(
      sources(world({ secrets: [caSecret('client-ca', { 'ca.crt': base64(CA_CERT), 'ca.crl': base64('a list') })], ingresses: [tlsIngress('secure', 'a.example.com', 'client-ca')] })),
    );
    expect(revoking.caCertificates[0]!.pem).to.equal(missing.caCertificates[0]!.pem);
    expect(revoking.warnings.map((warning) => warning.message)).to.deep.equal([
      'Secret default/client-ca holds a ca.crl, and revocation lists are not applied: its client certificate authentication refuses every certificate',
    ]);
    const empty = buildMapModel(sources(world({ secrets: [caSecret('client-ca', {})], ingresses: [tlsIngress('secure', 'a.example.com', 'client-ca')] })));
    expect(empty.warnings.map((warning) => warning.message)).to.deep.equal([
      'Secret default/client-ca data[ca.crt] is missing or not base64: its client certificate authentication refuses every certificate',
    ]);
  });

  it('follows a new CA and the annotation going, from one build to the next with the same cache', () => {
    const cache = new MapModelCache();
    const first = caSecret('client-ca', { 'ca.crt': base64(CA_CERT) });
    const ingresses = [tlsIngress('secure', 'a.example.com', 'client-ca'), tlsIngress('open', 'b.example.com')];
    buildMapModel(sources(world({ secrets: [first], ingresses })), cache);
    const renewed = buildMapModel(sources(world({ secrets: [caSecret('client-ca', { 'ca.crt': base64(SELF_SIGNED_CERT) })], ingresses })), cache);
    expect(renewed.caCertificates.map((ca) => ca.pem)).to.deep.equal([SELF_SIGNED_CERT]);
    const without = buildMapModel(sources(world({ secrets: [first], ingresses: [tlsIngress('secure', 'a.example.com'), ingresses[1]!] })), cache);
    expect(without.certificates.map((line) => [line.hosts, line.clientCaFile])).to.deep.equal([[['a.example.com', 'b.example.com'], undefined]]);
    expect([without.clientCertificates, without.caCertificates]).to.deep.equal([false, []]);
  });
});
