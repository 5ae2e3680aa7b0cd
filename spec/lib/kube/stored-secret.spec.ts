import { expect } from 'chai';
import { storedSecret } from '../../../lib/kube/stored-secret.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

const secret = (fields: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'shop' }, type: 'kubernetes.io/tls', ...fields });
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('storedSecret', () => {
  it('merges stringData into data, base64-encoded, stringData winning, and drops stringData as the API server does', () => {
    const stored = storedSecret(secret({ data: { a: b64('from data'), b: b64('kept') }, stringData: { a: 'from stringData', c: 'ünïcode' } }));
    expect(stored).to.deep.equal({
      ok: true,
      object: secret({ data: { a: b64('from stringData'), b: b64('kept'), c: b64('ünïcode') } }),
    });
  });

  it('accepts base64 with line breaks (as base64 prints it) and stores it canonical', () => {
    const text = 'x'.repeat(200);
    const wrapped = b64(text).replace(/.{76}/g, '$&\n');
    expect(wrapped).to.contain('\n');
    const stored = storedSecret(secret({ data: { 'tls.crt': `${wrapped}\r\n` } }));
    expect(stored.ok && stored.object['data']).to.deep.equal({ 'tls.crt': b64(text) });
  });

  it('leaves a Secret without stringData or line breaks as it is (the same object)', () => {
    const object = secret({ data: { a: b64('x') } });
    expect(storedSecret(object)).to.deep.equal({ ok: true, object });
    expect((storedSecret(object) as { object: KubeObject }).object).to.equal(object);
  });

  it('types a Secret written without type as Opaque, as the API server defaults it (a type=Opaque watch must find it)', () => {
    const { type: _none, ...untyped } = secret({ data: { auth: 'Ym9i' } });
    expect(storedSecret(untyped)).to.deep.equal({ ok: true, object: { ...untyped, type: 'Opaque' } });
    const { type: _also, ...empty } = secret({});
    expect(storedSecret(empty)).to.deep.equal({ ok: true, object: { ...empty, type: 'Opaque' } });
  });

  it('refuses invalid base64, naming the object and key but never the value', () => {
    for (const value of ['not base64!', 'YWJj ZA==', 'YWJjZA', 'YW=Jj']) {
      const stored = storedSecret(secret({ data: { 'tls.key': value } }));
      expect(stored, value).to.deep.equal({ ok: false, error: 'Secret shop/tls: data[tls.key] is not valid base64' });
    }
  });

  it('refuses values that are not strings and keys the API server refuses', () => {
    expect(storedSecret(secret({ data: { a: 3 } }))).to.deep.equal({ ok: false, error: 'Secret shop/tls: data[a] is not a string' });
    expect(storedSecret(secret({ stringData: { a: ['x'] } }))).to.deep.equal({ ok: false, error: 'Secret shop/tls: stringData[a] is not a string' });
    expect(storedSecret(secret({ data: { 'a/b': b64('x') } }))).to.deep.equal({
      ok: false,
      error: "Secret shop/tls: data key \"a/b\" is not a valid key (letters, digits, '-', '_' and '.')",
    });
    expect(storedSecret(secret({ data: 'x' }))).to.deep.equal({ ok: false, error: 'Secret shop/tls: data is not a mapping' });
  });
});
