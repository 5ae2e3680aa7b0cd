import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkConfig } from '../../../lib/haproxy/check.ts';
import { parseFeatures, readFeatures } from '../../../lib/haproxy/features.ts';
import { LEAF_CERT, LEAF_KEY } from '../../support/tls-fixture.ts';

/** A `haproxy -vv` answer around a feature list (the lines that matter, captured from Debian's builds). */
const vv = (features: string) => `HAProxy version 3.2.26-1 2026/11/01 - https://haproxy.org/\nBuild options :\nFeature list : ${features}\nDefault settings :\n`;

describe('parseFeatures', () => {
  it("reads QUIC from 3.2's and 3.4's +QUIC on OpenSSL 3.5+ (no compatibility layer)", () => {
    expect(parseFeatures(vv('-51DEGREES +ACCEPT4 +OPENSSL +QUIC -QUIC_OPENSSL_COMPAT +RT +SSL -ZLIB +ACME'))).to.deep.equal({ quic: true });
  });

  it("reads no QUIC from 2.6's -QUIC", () => {
    expect(parseFeatures(vv('+OPENSSL -PCRE +PCRE2 +PROMEX -QUIC +RT +SLZ'))).to.deep.equal({ quic: false });
  });

  it("reads no QUIC from 3.0's +QUIC_OPENSSL_COMPAT: that layer refuses a QUIC bind without the global limited-quic", () => {
    expect(parseFeatures(vv('+OPENSSL +QUIC +QUIC_OPENSSL_COMPAT +RT'))).to.deep.equal({ quic: false });
  });

  it('refuses an answer without a feature list rather than reading it as no feature', () => {
    expect(() => parseFeatures('HAProxy version 2.6.12\n')).to.throw('no Feature list line');
  });

  it('reads QUIC exactly when the binary in use (HAPROXY_BIN or haproxy from PATH) accepts a QUIC bind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'features-'));
    await writeFile(join(dir, 'site.pem'), LEAF_CERT + LEAF_KEY);
    const config = join(dir, 'haproxy.cfg');
    await writeFile(
      config,
      // default-path config: the certificate by a relative name, as the directive guard wants it.
      'global\n  default-path config\ndefaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n' +
        `frontend f\n  bind quic4@127.0.0.1:8443 ssl crt site.pem alpn h3\n  http-request return status 200\n`,
    );
    const [features, check] = await Promise.all([readFeatures(), checkConfig(config)]);
    expect(check.output, 'the configuration is refused for nothing but QUIC').not.to.match(/guard|unable to load|No such file/);
    expect(features.quic, check.output).to.equal(check.valid);
  });

  it('fails loudly when the binary is missing', async () => {
    const error = await readFeatures('/nonexistent/haproxy').then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).to.match(/^\/nonexistent\/haproxy -vv failed/);
  });
});
