import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readCapabilities } from '../../lib/haproxy/capabilities.ts';
import { ask, EchoBackend, routed, type Seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';

/**
 * HTTP/3 end to end: local mode on an HAProxy built with QUIC renders a QUIC
 * bind beside the HTTPS bind and an alt-svc header, and a real HTTP/3 client
 * (Debian's curl with ngtcp2 and nghttp3, .ci/provision-curl) reaches the
 * backend of an Ingress host over QUIC with that host's certificate; on an
 * HAProxy without QUIC (Debian's 2.6) nothing of it is rendered.
 *
 * The binaries, each checked for what it must be (a missing one fails, never skips):
 * - HAPROXY_QUIC_BIN, else `.ci/provision-haproxy 3.2` where the script exists, else HAPROXY_BIN;
 * - HAPROXY_NO_QUIC_BIN, else `.ci/provision-haproxy 2.6` where the script exists, else `haproxy` from PATH;
 * - CURL_HTTP3_BIN, else `.ci/provision-curl` (cached after its first run).
 */

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs a program to its end: its output, or a rejection naming it and what it printed. */
function run(program: string, args: readonly string[], timeout = 600_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(program, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof (error as { code?: unknown }).code !== 'number') return reject(new Error(`${program} ${args.join(' ')}: ${error.message}\n${stderr}`));
      resolvePromise({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr });
    });
  });
}

/** The last line a provisioning script prints: the binary's path. */
async function provisioned(script: string, ...args: string[]): Promise<string> {
  const result = await run(join(ROOT, '.ci', script), args);
  if (result.code !== 0) throw new Error(`.ci/${script} ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout.trim().split('\n').pop()!;
}

/** The HAProxy `variable` names (else provisioned, else `fallback`), checked to be built with QUIC or without. */
async function haproxyFor(variable: string, minor: string, fallback: string | undefined, quic: boolean): Promise<string> {
  const named = process.env[variable];
  const binary = named || (existsSync(join(ROOT, '.ci', 'provision-haproxy')) ? await provisioned('provision-haproxy', minor) : (fallback ?? 'haproxy'));
  expect((await readCapabilities(binary)).quic, `${binary} must be built ${quic ? 'with' : 'without'} QUIC (set ${variable} to HAProxy ${minor}'s path)`).to.equal(quic);
  return binary;
}

/** Starts local mode on `binary` (HAPROXY_BIN for as long as the harness runs) with two HTTPS hosts of their own certificates. */
async function startOn(binary: string, echo: EchoBackend): Promise<LocalHarness> {
  process.env['HAPROXY_BIN'] = binary;
  const harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
  await harness.write('echo.yaml', docs(service('echo', [{ port: 80, targetPort: echo.port }]), slice('echo-1', 'echo', undefined, echo.port)));
  await harness.write(
    'ingresses.yaml',
    docs(
      tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY),
      tlsSecret('apex-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY),
      routed('shop', 'shop.example.com', {}, ['/'], 'shop-tls'),
      routed('apex', 'example.com', {}, ['/'], 'apex-tls'),
    ),
  );
  await eventually(
    () => ask(harness, 'shop.example.com', '/', { tls: true }),
    (answer) => answer.status === 200,
    'the Ingresses to be served over HTTPS',
    15_000,
  );
  await harness.settled();
  return harness;
}

describe('HTTP/3 (QUIC) end to end', function () {
  this.timeout(600_000);
  const savedBinary = process.env['HAPROXY_BIN'];
  let echo: EchoBackend;
  let curl: string;
  let caFiles: { readonly shop: string; readonly apex: string };

  /** One request with curl over HTTP/3 only (no fallback to TCP), the host's certificate verified against `ca`. */
  const h3 = (harness: LocalHarness, host: string, ca: string) =>
    run(curl, [
      '--http3-only',
      '--silent',
      '--show-error',
      '--max-time',
      '10',
      '--cacert',
      ca,
      '--resolve',
      `${host}:${harness.ports.https}:127.0.0.1`,
      '--write-out',
      '\n%{http_version} %{response_code}',
      `https://${host}:${harness.ports.https}/h3-path`,
    ]);

  before(async () => {
    curl = process.env['CURL_HTTP3_BIN'] || (await provisioned('provision-curl'));
    const version = await run(curl, ['-V']);
    expect(version.stdout, `${curl} must speak HTTP/3`).to.match(/^Features:.*\bHTTP3\b/m);
    const dir = await mkdtemp(join(tmpdir(), 'http3-'));
    caFiles = { shop: join(dir, 'ca.pem'), apex: join(dir, 'apex.pem') };
    await writeFile(caFiles.shop, CA_CERT);
    await writeFile(caFiles.apex, SELF_SIGNED_CERT);
    echo = await EchoBackend.start();
  });

  after(async () => {
    await echo?.stop();
    if (savedBinary === undefined) delete process.env['HAPROXY_BIN'];
    else process.env['HAPROXY_BIN'] = savedBinary;
  });

  describe('on an HAProxy built with QUIC', () => {
    let harness: LocalHarness;

    before(async () => {
      harness = await startOn(await haproxyFor('HAPROXY_QUIC_BIN', '3.2', savedBinary, true), echo);
    });

    after(async () => {
      await harness?.stop();
    });

    it('binds QUIC on the HTTPS port beside the HTTPS bind', async () => {
      const config = await readFile(join(harness.workDir, 'haproxy.cfg'), 'utf8');
      expect(config).to.match(new RegExp(`^  bind 127\\.0\\.0\\.1:${harness.ports.https} ssl crt-list \\S+ strict-sni$`, 'm'));
      expect(config).to.match(new RegExp(`^  bind quic4@127\\.0\\.0\\.1:${harness.ports.https} ssl crt-list \\S+ strict-sni alpn h3$`, 'm'));
    });

    it("serves a request over HTTP/3 to the Ingress host's backend, with that host's certificate (SNI)", async () => {
      for (const [host, ca] of [
        ['shop.example.com', caFiles.shop],
        ['example.com', caFiles.apex],
      ] as const) {
        const answer = await h3(harness, host, ca);
        expect(answer.code, `${host}: ${answer.stderr}`).to.equal(0);
        const [body, status] = answer.stdout.split('\n');
        expect(status, host).to.equal('3 200');
        const seen = JSON.parse(body!) as Seen;
        // https: ssl_fc holds over QUIC, so the rules the template keys on it (HTTPS redirects, the 421 of a
        // client certificate's host) hold on HTTP/3 as on HTTPS.
        expect([seen.url, seen.headers.host, seen.headers['x-forwarded-proto']], host).to.deep.equal(['/h3-path', `${host}:${harness.ports.https}`, 'https']);
      }
    });

    it("refuses the other host's certificate: the name decides which one QUIC presents", async () => {
      const crossed = await h3(harness, 'example.com', caFiles.shop);
      // 60: the peer's certificate did not verify against the CA given.
      expect([crossed.code, crossed.stdout.trim()], crossed.stderr).to.deep.equal([60, '0 000']);
    });

    it('advertises HTTP/3 on HTTPS answers with alt-svc, not on plain HTTP ones', async () => {
      const https = await ask(harness, 'shop.example.com', '/', { tls: true });
      expect([https.status, https.headers['alt-svc']]).to.deep.equal([200, `h3=":${harness.ports.https}"; ma=86400`]);
      const http = await ask(harness, 'shop.example.com', '/');
      expect([http.status, http.headers['alt-svc']]).to.deep.equal([200, undefined]);
    });
  });

  describe('on an HAProxy without QUIC', () => {
    let harness: LocalHarness;

    before(async () => {
      harness = await startOn(await haproxyFor('HAPROXY_NO_QUIC_BIN', '2.6', undefined, false), echo);
    });

    after(async () => {
      await harness?.stop();
    });

    it('renders no QUIC bind and no alt-svc, and HTTPS serves as before', async () => {
      const config = await readFile(join(harness.workDir, 'haproxy.cfg'), 'utf8');
      expect(config).to.match(new RegExp(`^  bind 127\\.0\\.0\\.1:${harness.ports.https} ssl crt-list `, 'm'));
      expect(config).not.to.match(/quic|alt-svc/);
      const https = await ask(harness, 'shop.example.com', '/', { tls: true });
      expect([https.status, https.headers['alt-svc']]).to.deep.equal([200, undefined]);
    });

    it('answers no HTTP/3 client', async () => {
      const answer = await h3(harness, 'shop.example.com', caFiles.shop);
      expect(answer.code, answer.stdout).not.to.equal(0);
    });
  });
});
