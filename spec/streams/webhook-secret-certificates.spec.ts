import { expect } from 'chai';
import type { Observable } from 'rxjs';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { generateCertificate, type GeneratedCertificate } from '../../lib/webhook/serving-certificate.ts';
import type { CertificateWrite } from '../../lib/webhook/webhook-certificate.ts';
import { secretCertificates } from '../../streams/webhook-secret-certificates.ts';
import { testScheduler } from '../support/marbles.ts';

// The renewal check runs every 10 frames in place of an hour.
const KEY = 'edge/hook-tls';
const a = generateCertificate({ dnsNames: ['hook.edge.svc'] });
const b = generateCertificate({ dnsNames: ['hook.edge.svc'] });
const b64 = (text: string) => Buffer.from(text).toString('base64');
const holding = (c: GeneratedCertificate): ReadonlyMap<string, KubeObject> =>
  new Map([[KEY, { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'edge', name: 'hook-tls' }, data: { 'tls.crt': b64(c.cert), 'tls.key': b64(c.key), 'ca.crt': b64(c.ca) } }]]);
const served = (c: GeneratedCertificate) => ({ cert: c.cert, key: c.key, ca: c.ca });
const none: ReadonlyMap<string, KubeObject> = new Map();

describe('webhook Secret certificate stage', () => {
  function stage(scheduler: ReturnType<typeof testScheduler>, writes?: readonly (() => Observable<CertificateWrite>)[]) {
    const said: string[] = [];
    const calls: (string | undefined)[] = [];
    let n = 0;
    const operator = secretCertificates({
      key: KEY,
      ...(writes
        ? {
            generate: (secret: KubeObject | undefined) => {
              calls.push(`${scheduler.now()} ${secret === undefined ? 'none' : 'held'}`);
              return writes[Math.min(n++, writes.length - 1)]!();
            },
          }
        : {}),
      renewalCheckMs: 10,
      log: { info: (m) => void said.push(`info ${m}`), warn: (m) => void said.push(`warn ${m}`) },
      scheduler,
    });
    return { operator, said, calls };
  }

  it('renews when due at a renewal check; a renewal that fails keeps the certificate in force, is said, and is tried again at the next check', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // 0: a is held, not due. 10: due, the write fails. 20: fails again (each attempt said: an hour apart). 30: renewed:
      // nothing served until the renewed Secret (b) comes back through the watch at 33.
      const secrets = hot('a 32ms b', { a: holding(a), b: holding(b) });
      const fails = () => cold<CertificateWrite>('2ms #', undefined, new Error('the API server is away'));
      const { operator, said, calls } = stage(scheduler, [() => cold('(n|)', { n: 'none' }), fails, fails, () => cold('2ms (r|)', { r: 'renewed' }), () => cold('(n|)', { n: 'none' })]);
      expectObservable(secrets.pipe(operator), '^ 45ms !').toBe('a 32ms b', { a: served(a), b: served(b) });
      flush();
      expect(calls).to.deep.equal(['0 held', '10 held', '20 held', '30 held', '33 held', '40 held']);
      const failed = 'warn webhook certificate not written to Secret edge/hook-tls: the API server is away';
      expect(said).to.deep.equal([failed, failed, 'info webhook certificate renewed in Secret edge/hook-tls']);
    });
  });

  it('generates a missing Secret, and serves what comes back through the watch', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, cold, expectObservable, flush }) => {
      // 0: no Secret: created (nothing served yet). 4: the created Secret arrives and is served.
      const secrets = hot('n 3ms a', { n: none, a: holding(a) });
      const { operator, said, calls } = stage(scheduler, [() => cold('1ms (c|)', { c: 'created' }), () => cold('(n|)', { n: 'none' })]);
      expectObservable(secrets.pipe(operator), '^ 8ms !').toBe('4ms a', { a: served(a) });
      flush();
      expect(calls).to.deep.equal(['0 none', '4 held']);
      expect(said).to.deep.equal(['info webhook certificate generated into Secret edge/hook-tls']);
    });
  });

  it('waits for a Secret it may not write, says so once, and serves it when it comes', () => {
    const scheduler = testScheduler();
    scheduler.run(({ hot, expectObservable, flush }) => {
      // 0 and 10 (a renewal check): no Secret, said once. 15: it comes.
      const secrets = hot('n 14ms a', { n: none, a: holding(a) });
      const { operator, said } = stage(scheduler);
      expectObservable(secrets.pipe(operator), '^ 25ms !').toBe('15ms a', { a: served(a) });
      flush();
      expect(said).to.deep.equal(['warn webhook waits for Secret edge/hook-tls with its certificate']);
    });
  });
});
