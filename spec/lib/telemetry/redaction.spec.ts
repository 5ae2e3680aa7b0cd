import { expect } from 'chai';
import { IndexedStore } from '../../../lib/store/indexed-store.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { isSensitiveKey, REDACTED, Redactor } from '../../../lib/telemetry/redaction.ts';
import { secretValues } from '../../../lib/telemetry/secret-values.ts';
import { base64, LEAF_CERT, LEAF_KEY, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';

function tlsSecret(name: string, certificate: string, key: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default', resourceVersion: name },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': base64(certificate), 'tls.key': base64(key) },
  };
}

describe('redaction', () => {
  it('removes a credential it was told, as is, JSON-escaped and base64-encoded', () => {
    const redactor = new Redactor();
    redactor.add('pa"ss\\word-42');
    expect(redactor.scrub('user admin, password pa"ss\\word-42.')).to.equal(`user admin, password ${REDACTED}.`);
    expect(redactor.scrub(JSON.stringify({ msg: 'password pa"ss\\word-42' }))).to.equal(`{"msg":"password ${REDACTED}"}`);
    expect(redactor.scrub(`Authorization: Basic ${Buffer.from('pa"ss\\word-42').toString('base64')}`)).to.equal(`Authorization: Basic ${REDACTED}`);
  });

  it('removes private keys by their shape, whole or cut off, and long base64 runs of unknown origin', () => {
    const redactor = new Redactor();
    expect(redactor.scrub(`cert ok\n${SELF_SIGNED_KEY}tail`)).to.equal(`cert ok\n${REDACTED}\ntail`);
    expect(redactor.scrub(`oops ${LEAF_KEY.slice(0, 80)}`)).to.not.include(LEAF_KEY.slice(40, 80));
    // The snippet of a manifest that does not parse, holding part of a base64 key.
    const snippet = `  3 |   tls.key: ${base64(LEAF_KEY).slice(0, 70)}`;
    expect(redactor.scrub(snippet)).to.equal(`  3 |   tls.key: ${REDACTED}`);
    // Hashes and trace ids are lower-case hex: they stay.
    const hash = 'a'.repeat(20) + '0123456789abcdef'.repeat(3);
    expect(redactor.scrub(`deployed ${hash}`)).to.equal(`deployed ${hash}`);
  });

  it('learns the data of every Secret in the stores and forgets nothing while they stay the same', () => {
    const secrets = new IndexedStore([]);
    secrets.upsert(tlsSecret('shop', LEAF_CERT, LEAF_KEY));
    const ingresses = new IndexedStore([]);
    ingresses.upsert({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'shop', namespace: 'default' } });
    const stores = new Map([
      ['secrets', secrets],
      ['ingresses', ingresses],
    ]);
    const values = secretValues(() => stores);
    const first = values();
    expect(first).to.include(LEAF_KEY).and.include(base64(LEAF_KEY));
    expect(values()).to.equal(first);
    const redactor = new Redactor();
    redactor.setSource(values);
    // A line of the key, quoted in an error, is as secret as the whole key.
    const keyLine = LEAF_KEY.split('\n')[2]!;
    expect(redactor.scrub(`could not use "${keyLine}"`)).to.equal(`could not use "${REDACTED}"`);
    expect(redactor.scrub(`the certificate: ${LEAF_CERT}`)).to.not.include(LEAF_CERT.split('\n')[1]);
    // A Secret added later is learnt at the next use.
    secrets.upsert({ ...tlsSecret('other', LEAF_CERT, LEAF_KEY), data: { token: base64('later-added-token') } });
    expect(redactor.scrub('token later-added-token')).to.equal(`token ${REDACTED}`);
  });

  it('removes basic-auth hashes as a rendered userlist writes them: alone and inside double quotes, from htpasswd lines and per-user keys', () => {
    const hash = '$5$salt$kpa26zwgX83BPSR8d7w93OIXbFt/d3UOTZaAu5vsTM6';
    const other = '$2y$05$abcdefghijklmnopqrstuu5sL6qDZ4MhLG0c5oVYD2d8OQRb4W5cG';
    const secrets = new IndexedStore([]);
    const opaque = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'Opaque', data });
    secrets.upsert(opaque('htpasswd', { auth: base64(`bob:${hash}\ncarol:${other}\n`) }));
    secrets.upsert(opaque('per-user', { dave: base64(other) }));
    const redactor = new Redactor();
    redactor.setSource(secretValues(() => new Map([['authsecrets', secrets]])));
    const userlist = (value: string) => `userlist auth_default_htpasswd\n  user bob password ${value}\n`;
    expect(redactor.scrub(userlist(`"${hash.replaceAll('$', '\\$')}"`))).to.equal(userlist(`"${REDACTED}"`));
    expect(redactor.scrub(userlist(hash))).to.equal(userlist(REDACTED));
    expect(redactor.scrub(userlist(`"${other.replaceAll('$', '\\$')}"`))).to.equal(userlist(`"${REDACTED}"`));
  });

  it('trusts the configuration about a store of Secrets whose objects do not name their kind', () => {
    const listed = new IndexedStore([]);
    listed.upsert({ metadata: { name: 'token', namespace: 'default' }, data: { token: base64('listed-token-5d4c') } });
    const stores = new Map([['credentials', listed]]);
    expect(secretValues(() => stores)()).to.deep.equal([]);
    expect(
      secretValues(
        () => stores,
        (name) => name === 'credentials',
      )(),
    ).to.include('listed-token-5d4c');
  });

  it('scans large texts against many secrets in one pass', () => {
    const redactor = new Redactor();
    const many = Array.from({ length: 2_000 }, (_, i) => `secret-value-${i}-${'x'.repeat(20)}`);
    redactor.setSource(() => many);
    const text = `${'backend b\n  server s 10.0.0.1:80\n'.repeat(20_000)}user ${many[1_234]} end`;
    const started = performance.now();
    const scrubbed = redactor.scrub(text);
    expect(scrubbed.endsWith(`user ${REDACTED} end`)).to.equal(true);
    expect(performance.now() - started).to.be.below(1_000);
  });

  it('copies an object met twice twice, and cuts only a real cycle', () => {
    const problem = { object: 'Ingress a/b', field: 'spec', message: 'left out' };
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle['self'] = cycle;
    expect(new Redactor().redact({ excluded: [problem], quarantined: [problem], cycle })).to.deep.equal({
      excluded: [problem],
      quarantined: [problem],
      cycle: { name: 'loop', self: '[circular]' },
    });
  });

  it('redacts values under credential keys and the data of Secret objects, in copies', () => {
    const redactor = new Redactor();
    const config = {
      dataplane: { urls: ['http://10.0.0.5:5555'], username: 'admin', password: 'adminpwd' },
      templateValues: { apiToken: 'abc123456', secretName: 'shop-tls', nested: new Map([['clientSecret', 'zzz999999']]) },
      object: tlsSecret('shop', LEAF_CERT, LEAF_KEY),
    };
    const redacted = redactor.redact(config) as typeof config & { templateValues: { nested: Record<string, string> } };
    expect(redacted.dataplane).to.deep.equal({ urls: ['http://10.0.0.5:5555'], username: 'admin', password: REDACTED });
    expect(redacted.templateValues).to.deep.equal({ apiToken: REDACTED, secretName: 'shop-tls', nested: { clientSecret: REDACTED } });
    expect(redacted.object.data).to.deep.equal({ 'tls.crt': REDACTED, 'tls.key': REDACTED });
    expect(config.dataplane.password).to.equal('adminpwd');
    expect(['dataplane_password', 'OTEL_EXPORTER_OTLP_HEADERS', 'authorization', 'privateKey', 'secretName', 'tokenFile'].map(isSensitiveKey)).to.deep.equal([
      true,
      false,
      true,
      true,
      false,
      false,
    ]);
  });
});
