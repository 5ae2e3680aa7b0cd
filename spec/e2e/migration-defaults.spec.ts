import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { ask, EchoBackend, routed, seen, type Seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * What an Ingress written for ingress-nginx or haproxytech gets by those
 * controllers' defaults, end to end through one controller and one real
 * HAProxy (issue 23): the forwarded headers a backend receives over HTTP
 * and HTTPS, HSTS on HTTPS, chunked bodies above proxy-body-size, the
 * limit-rps burst, the affinity cookie's lifetime, and haproxy.org's CORS
 * preflights.
 */

const HAPROXY = 'haproxy.org/';
const NGINX = 'nginx.ingress.kubernetes.io/';
const MIB = 1024 * 1024;

const rows: Record<string, string> = {
  'forwarded.yaml': docs(
    routed('forwarded', 'forwarded.example.com', {}, ['/'], 'shop-tls'),
    routed('no-xff', 'no-xff.example.com', { [`${HAPROXY}forwarded-for`]: 'false' }),
    routed('prefix', 'prefix.example.com', { [`${NGINX}x-forwarded-prefix`]: '/shop' }),
    tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY),
  ),
  'hsts.yaml': docs(
    routed('nginx-tls', 'nginx-tls.example.com', { [`${NGINX}proxy-body-size`]: '1m' }, ['/'], 'shop-tls'),
    routed('nginx-no-hsts', 'nginx-no-hsts.example.com', { [`${NGINX}hsts`]: 'false' }, ['/'], 'shop-tls'),
    routed('haproxy-tls', 'haproxy-tls.example.com', { [`${HAPROXY}timeout-server`]: '30s' }, ['/'], 'shop-tls'),
  ),
  'limits.yaml': docs(routed('upload', 'upload.example.com', { [`${NGINX}proxy-body-size`]: '10m' }), routed('burst', 'burst.example.com', { [`${NGINX}limit-rps`]: '20' })),
  'affinity.yaml': docs(
    // Services of their own: affinity is a backend setting, and the oldest Ingress's settings win for a shared backend.
    routed('max-age', 'max-age.example.com', { [`${NGINX}affinity`]: 'cookie', [`${NGINX}session-cookie-max-age`]: '172800' }, ['/'], undefined, 'echo-2'),
    routed(
      'expires',
      'expires.example.com',
      { [`${NGINX}affinity`]: 'cookie', [`${NGINX}session-cookie-name`]: 'route', [`${NGINX}session-cookie-expires`]: '3600' },
      ['/'],
      undefined,
      'echo-3',
    ),
  ),
  'cors.yaml': docs(
    routed('cors-backend', 'cors-backend.example.com', { [`${HAPROXY}cors-enable`]: 'true', [`${HAPROXY}cors-allow-origin`]: 'https://app.example.com' }),
    routed('cors-respond', 'cors-respond.example.com', {
      [`${HAPROXY}cors-enable`]: 'true',
      [`${HAPROXY}cors-allow-origin`]: 'https://app.example.com',
      [`${HAPROXY}cors-respond-to-options`]: 'true',
    }),
  ),
};

describe('ingress-nginx and haproxytech defaults end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;

  before(async () => {
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0, watchedConfig: true }, []);
    const port = [{ port: 80, targetPort: echo.port }];
    const services = ['echo', 'echo-2', 'echo-3'].flatMap((name) => [service(name, port), slice(`${name}-1`, name, undefined, echo.port)]);
    await harness.write('echo.yaml', docs(...services));
    for (const [file, text] of Object.entries(rows)) await harness.write(file, text);
    await eventually(
      () => ask(harness, 'cors-respond.example.com', '/'),
      (answer) => answer.status === 200,
      'the rows to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  const forwarded = (headers: Seen['headers']) => [headers['x-forwarded-for'], headers['x-real-ip'], headers['x-forwarded-proto'], headers['x-forwarded-host'], headers['x-forwarded-port']];

  it('sends the backend X-Forwarded-For, X-Real-IP, -Proto, -Host and -Port over HTTP, replacing the values a client sent', async () => {
    const plain = await seen(harness, 'forwarded.example.com', '/', {
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-real-ip': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', 'x-forwarded-port': '1' },
    });
    expect(forwarded(plain.headers)).to.deep.equal(['127.0.0.1', '127.0.0.1', 'http', 'forwarded.example.com', String(harness.ports.http)]);
  });

  it('sends X-Forwarded-Proto https and the HTTPS port over HTTPS', async () => {
    const secure = await seen(harness, 'forwarded.example.com', '/', { tls: true });
    expect(forwarded(secure.headers)).to.deep.equal(['127.0.0.1', '127.0.0.1', 'https', 'forwarded.example.com', String(harness.ports.https)]);
  });

  it('sends no client address with haproxy.org forwarded-for "false", and X-Forwarded-Prefix with nginx x-forwarded-prefix', async () => {
    const without = await seen(harness, 'no-xff.example.com', '/', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(forwarded(without.headers)).to.deep.equal([undefined, undefined, 'http', 'no-xff.example.com', String(harness.ports.http)]);
    expect((await seen(harness, 'prefix.example.com', '/')).headers['x-forwarded-prefix']).to.equal('/shop');
  });

  it('sends ingress-nginx\'s Strict-Transport-Security on HTTPS to a TLS Ingress written for it, not with hsts "false", not for haproxy.org', async () => {
    const nginx = await ask(harness, 'nginx-tls.example.com', '/', { tls: true });
    expect([nginx.status, nginx.headers['strict-transport-security']]).to.deep.equal([200, 'max-age=31536000; includeSubDomains']);
    // Plain HTTP is redirected (ingress-nginx's ssl-redirect) and carries no HSTS.
    const clear = await ask(harness, 'nginx-tls.example.com', '/');
    expect([clear.status, clear.headers['strict-transport-security']]).to.deep.equal([308, undefined]);
    const off = await ask(harness, 'nginx-no-hsts.example.com', '/', { tls: true });
    expect([off.status, off.headers['strict-transport-security']]).to.deep.equal([200, undefined]);
    const haproxy = await ask(harness, 'haproxy-tls.example.com', '/', { tls: true });
    expect([haproxy.status, haproxy.headers['strict-transport-security']]).to.deep.equal([200, undefined]);
  });

  it('answers 413 to an 11 MiB chunked body with proxy-body-size 10m, and passes a 9 MiB one whole', async () => {
    const big = await ask(harness, 'upload.example.com', '/up', { method: 'POST', body: Buffer.alloc(11 * MIB), chunked: true });
    expect(big.status, big.body).to.equal(413);
    const fits = await seen(harness, 'upload.example.com', '/up', { method: 'POST', body: Buffer.alloc(9 * MIB), chunked: true });
    expect([fits.headers['transfer-encoding'], fits.bodyLength]).to.deep.equal(['chunked', 9 * MIB]);
  });

  it("lets 40 quick requests at limit-rps 20 through (ingress-nginx's burst of 5 x 20, and one), and refuses the requests past the burst with 503", async () => {
    const burst = (count: number) => Promise.all(Array.from({ length: count }, async () => (await ask(harness, 'burst.example.com', '/')).status));
    const started = Date.now();
    expect(await burst(40)).to.deep.equal(Array<number>(40).fill(200));
    // A loaded machine can slow a batch of 100 past the refill rate, so batches go on until one meets the limit.
    const more: number[] = [];
    for (let batch = 0; batch < 10 && !more.includes(503); batch++) more.push(...(await burst(100)));
    const seconds = (Date.now() - started) / 1000;
    const passed = 40 + more.filter((status) => status === 200).length;
    expect(more.filter((status) => status !== 200 && status !== 503)).to.deep.equal([]);
    expect(more).to.include(503);
    // 101 at once, then 20 a second for as long as the requests took.
    expect(passed)
      .to.be.at.least(101)
      .and.at.most(101 + Math.ceil(20 * seconds));
  });

  it('gives the affinity cookie Max-Age from session-cookie-max-age, and from session-cookie-expires alone', async () => {
    const cookie = async (host: string) => (await ask(harness, host, '/')).headers['set-cookie']?.[0] ?? '';
    expect(await cookie('max-age.example.com')).to.match(/^INGRESSCOOKIE=[^;]+;.*; Max-Age=172800$/);
    expect(await cookie('expires.example.com')).to.match(/^route=[^;]+;.*; Max-Age=3600$/);
  });

  it('passes a haproxy.org CORS preflight to the backend, adding the allow headers, and answers it 204 only with cors-respond-to-options "true"', async () => {
    const preflight = { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'PUT' } };
    const passed = await ask(harness, 'cors-backend.example.com', '/api', preflight);
    expect([passed.status, (JSON.parse(passed.body) as Seen).method]).to.deep.equal([200, 'OPTIONS']);
    expect([passed.headers['access-control-allow-origin'], passed.headers['access-control-allow-methods'], passed.headers['access-control-max-age']]).to.deep.equal([
      'https://app.example.com',
      '*',
      '5',
    ]);
    const answered = await ask(harness, 'cors-respond.example.com', '/api', preflight);
    expect([answered.status, answered.body, answered.headers['access-control-allow-origin']]).to.deep.equal([204, '', 'https://app.example.com']);
  });

  it('sends no forwarded header with templateValues.forwardedHeaders false, and keeps the values of a trusted proxy with trustForwardedHeaders', async () => {
    const shipped = await readFile(harness.configPath, 'utf8');
    const values = (send: boolean, trust: boolean) =>
      shipped.replace('  forwardedHeaders: true\n  trustForwardedHeaders: false\n', `  forwardedHeaders: ${send}\n  trustForwardedHeaders: ${trust}\n`);
    expect(values(false, false)).to.not.equal(shipped);
    const client = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com', 'x-forwarded-port': '443' };

    let mark = harness.mark();
    await writeFile(harness.configPath, values(false, false));
    await harness.next(mark, 'deployed');
    const none = await seen(harness, 'forwarded.example.com', '/');
    expect(forwarded(none.headers)).to.deep.equal([undefined, undefined, undefined, undefined, undefined]);

    mark = harness.mark();
    await writeFile(harness.configPath, values(true, true));
    await harness.next(mark, 'deployed');
    const behind = await seen(harness, 'forwarded.example.com', '/', { headers: client });
    expect(forwarded(behind.headers)).to.deep.equal(['203.0.113.9, 127.0.0.1', '203.0.113.9', 'https', 'app.example.com', '443']);
    const direct = await seen(harness, 'forwarded.example.com', '/');
    expect(forwarded(direct.headers)).to.deep.equal(['127.0.0.1', '127.0.0.1', 'http', 'forwarded.example.com', String(harness.ports.http)]);
  });
});
