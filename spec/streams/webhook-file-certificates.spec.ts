import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { generateCertificate } from '../../lib/webhook/serving-certificate.ts';
import { fileCertificates } from '../../streams/webhook-file-certificates.ts';
import { testScheduler } from '../support/marbles.ts';

// The files are looked at every 10 frames in place of 10 s.
const a = generateCertificate({ dnsNames: ['hook.edge.svc'] });
const b = generateCertificate({ dnsNames: ['hook.edge.svc'] });
type Files = { readonly cert: string; readonly key: string };

describe('webhook certificate files stage', () => {
  /** The stage with `reads` answered in turn (the last one again after), and what it warned. */
  function stage(scheduler: ReturnType<typeof testScheduler>, reads: readonly (() => Observable<Files>)[]) {
    const warned: string[] = [];
    let n = 0;
    const certificates = fileCertificates({
      certFile: 'tls.crt',
      keyFile: 'tls.key',
      read: () => reads[Math.min(n++, reads.length - 1)]!(),
      everyMs: 10,
      warn: (message) => void warned.push(message),
      scheduler,
    });
    return { certificates, warned };
  }

  it('reads the files at once and every 10 s, and gives a certificate only when they changed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      // Looks at 0, 10, 20, 30: a, a, b, b. The unchanged looks give nothing.
      const { certificates, warned } = stage(scheduler, [() => cold('(f|)', { f: a }), () => cold('(f|)', { f: a }), () => cold('(f|)', { f: b })]);
      expectObservable(certificates, '^ 35ms !').toBe('c 19ms d', { c: { cert: a.cert, key: a.key, ca: undefined }, d: { cert: b.cert, key: b.key, ca: undefined } });
      expect(warned).to.deep.equal([]);
    });
  });

  it('keeps the certificate in force through failed looks and a key that does not fit, saying each once', () => {
    const scheduler = testScheduler();
    const missing = new Error('ENOENT: tls.key');
    scheduler.run(({ cold, expectObservable, flush }) => {
      // 0: a. 10 and 20: the key file missing (said once). 30 and 40: b's certificate with a's key, a rotation
      // half done (said once). 50: b, served.
      const { certificates, warned } = stage(scheduler, [
        () => cold('(f|)', { f: a }),
        () => cold('#', undefined, missing),
        () => cold('#', undefined, missing),
        () => cold('(f|)', { f: { cert: b.cert, key: a.key } }),
        () => cold('(f|)', { f: { cert: b.cert, key: a.key } }),
        () => cold('(f|)', { f: b }),
      ]);
      expectObservable(certificates, '^ 55ms !').toBe('c 49ms d', { c: { cert: a.cert, key: a.key, ca: undefined }, d: { cert: b.cert, key: b.key, ca: undefined } });
      flush();
      expect(warned).to.have.length(2);
      expect(warned[0]).to.equal('webhook certificate files: ENOENT: tls.key');
      expect(warned[1]).to.match(/^webhook certificate files: tls\.crt and tls\.key cannot serve: /);
    });
  });

  it('looks again only once a slow read is done: looks never overlap', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      // The first read takes 25 frames; the looks due at 10 and 20 wait for it and run after it, one at a time.
      const slow = cold('25ms (f|)', { f: a });
      const { certificates } = stage(scheduler, [() => slow, () => cold('(f|)', { f: b })]);
      expectObservable(certificates, '^ 30ms !').toBe('25ms (cd)', { c: { cert: a.cert, key: a.key, ca: undefined }, d: { cert: b.cert, key: b.key, ca: undefined } });
    });
  });
});
