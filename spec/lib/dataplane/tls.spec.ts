import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { DataplaneClient, type DataplaneTlsOptions } from '../../../lib/dataplane/client.ts';
import { DataplaneUnavailable } from '../../../lib/dataplane/errors.ts';

const run = promisify(execFile);

const OPENSSL_CONFIG = [
  '[req]',
  'distinguished_name = dn',
  'prompt = no',
  '[dn]',
  'CN = unused',
  '[ca]',
  'basicConstraints = critical,CA:TRUE',
  'keyUsage = critical,keyCertSign,cRLSign',
  'subjectKeyIdentifier = hash',
  '[server]',
  'basicConstraints = CA:FALSE',
  'subjectAltName = IP:127.0.0.1,DNS:dpapi.example',
  'extendedKeyUsage = serverAuth',
  '[client]',
  'basicConstraints = CA:FALSE',
  'extendedKeyUsage = clientAuth',
  '',
].join('\n');

/** Test PKI made with the openssl CLI: one CA, a server certificate, client certificates on demand. */
class Pki {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  static async create(): Promise<Pki> {
    const pki = new Pki(await mkdtemp(join(tmpdir(), 'dataplane-tls-')));
    await writeFile(pki.path('openssl.cnf'), OPENSSL_CONFIG);
    await run('openssl', [
      'req',
      '-x509',
      '-new',
      '-nodes',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-keyout',
      pki.path('ca.key'),
      '-out',
      pki.path('ca.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=test-ca',
      '-config',
      pki.path('openssl.cnf'),
      '-extensions',
      'ca',
    ]);
    await pki.issue('server', 'dpapi', 'server');
    return pki;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** Writes `<name>.crt` and `<name>.key`, signed by the CA. */
  async issue(name: string, commonName: string, profile: 'server' | 'client'): Promise<void> {
    const config = this.path('openssl.cnf');
    await run('openssl', [
      'req',
      '-new',
      '-nodes',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-keyout',
      this.path(`${name}.key`),
      '-out',
      this.path(`${name}.csr`),
      '-subj',
      `/CN=${commonName}`,
      '-config',
      config,
    ]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      this.path(`${name}.csr`),
      '-CA',
      this.path('ca.crt'),
      '-CAkey',
      this.path('ca.key'),
      '-CAcreateserial',
      '-out',
      this.path(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      config,
      '-extensions',
      profile,
    ]);
  }
}

describe('dataplane client over HTTPS', () => {
  let pki: Pki;
  let server: Server;
  let url: string;
  let handshakes = 0;
  const clients: DataplaneClient[] = [];

  before(async () => {
    pki = await Pki.create();
    await pki.issue('client', 'client-one', 'client');
    server = createServer(
      {
        key: await readFile(pki.path('server.key')),
        cert: await readFile(pki.path('server.crt')),
        ca: await readFile(pki.path('ca.crt')),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (request, response) => {
        // Answers /info with the CN of the client certificate this connection presented.
        const peer = (request.socket as TLSSocket).getPeerCertificate();
        response.writeHead(200, { 'Content-Type': 'application/json', 'Configuration-Version': '1' });
        response.end(JSON.stringify({ api: { version: 'test' }, system: { client_cn: peer.subject?.CN } }));
      },
    );
    server.on('secureConnection', () => (handshakes += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    for (const created of clients.splice(0)) created.close();
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(pki.dir, { recursive: true, force: true });
  });

  function client(tls: DataplaneTlsOptions): DataplaneClient {
    const created = new DataplaneClient({ url, username: 'admin', password: 'pw', timeoutMs: 5_000, tls });
    clients.push(created);
    return created;
  }

  const mutual = (): DataplaneTlsOptions => ({ caFile: pki.path('ca.crt'), certFile: pki.path('client.crt'), keyFile: pki.path('client.key') });

  async function clientCn(dataplane: DataplaneClient): Promise<unknown> {
    return (await dataplane.info()).system?.['client_cn'];
  }

  async function unavailable(promise: Promise<unknown>): Promise<DataplaneUnavailable> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(DataplaneUnavailable);
    return error as DataplaneUnavailable;
  }

  it('trusts a custom CA and presents a client certificate, over one kept-alive connection', async () => {
    const dataplane = client(mutual());
    const before = handshakes;
    expect(await clientCn(dataplane)).to.equal('client-one');
    expect(await clientCn(dataplane)).to.equal('client-one');
    expect(handshakes - before).to.equal(1);
  });

  it('is refused by a server that requires a client certificate when it has none', async () => {
    const error = await unavailable(client({ caFile: pki.path('ca.crt') }).info());
    expect(error.message).to.include(`${url}/v3`);
  });

  it('refuses a server whose certificate does not chain to the configured CA', async () => {
    const error = await unavailable(client({ certFile: pki.path('client.crt'), keyFile: pki.path('client.key') }).info());
    expect(error.message).to.match(/certificate/i);
  });

  it('checks the server certificate against serverName instead of the address when asked', async () => {
    expect(await clientCn(client({ ...mutual(), serverName: 'dpapi.example' }))).to.equal('client-one');
    const error = await unavailable(client({ ...mutual(), serverName: 'other.example' }).info());
    expect(error.message).to.include('other.example');
  });

  it('picks up rotated client certificate files on the next request without a new client', async () => {
    // Files of its own, so rotating them does not disturb the other tests.
    await pki.issue('rotating', 'client-one', 'client');
    const tls = { caFile: pki.path('ca.crt'), certFile: pki.path('rotating.crt'), keyFile: pki.path('rotating.key') };
    const dataplane = client(tls);
    expect(await clientCn(dataplane)).to.equal('client-one');

    await pki.issue('next', 'client-two', 'client');
    // Half-way through a rotation (new certificate, old key) the request fails naming the files...
    await writeFile(tls.certFile, await readFile(pki.path('next.crt')));
    const error = await unavailable(dataplane.info());
    expect(error.message).to.include(tls.certFile).and.include(tls.keyFile);
    // ...and once the key follows, the same client presents the new certificate.
    await writeFile(tls.keyFile, await readFile(pki.path('next.key')));
    const before = handshakes;
    expect(await clientCn(dataplane)).to.equal('client-two');
    expect(await clientCn(dataplane)).to.equal('client-two');
    // One new connection for the new certificate, kept alive afterwards.
    expect(handshakes - before).to.equal(1);
  });

  it('names a missing TLS file', async () => {
    const error = await unavailable(client({ ...mutual(), caFile: pki.path('missing.crt') }).info());
    expect(error.message).to.include(pki.path('missing.crt'));
  });
});
