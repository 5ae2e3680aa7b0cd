import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';

/**
 * TLSRoutes and TCPRoutes end to end: a local-mode controller reads a
 * Gateway with a TLS Passthrough, a TLS Terminate and a TCP listener, and
 * real connections go through a real HAProxy to real servers on loopback:
 * TLS passed through to a TLS server with its own certificate (curl with
 * --resolve and SNI sees that certificate), TLS ended with the listener's
 * certificate before plain TCP to an echo server, TCP split by weight; a
 * new route on a served listener, a weight change and a new endpoint apply
 * without a reload.
 */

const run = promisify(execFile);

/** A TCP server that greets each connection with its name and a newline. */
async function greeter(name: string): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(`${name}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** An HTTPS server with its own certificate, answering every request with its name. */
async function tlsBackend(name: string): Promise<HttpsServer> {
  const server = createHttpsServer({ cert: LEAF_CERT, key: LEAF_KEY }, (req, res) => {
    req.resume();
    res.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** The first line a connection to HAProxy's port gets, or `refused` when it is closed without one. */
function greeting(port: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => resolve('refused'));
    socket.on('close', () => resolve(text === '' ? 'refused' : text.split('\n')[0]!));
  });
}

/** Over TLS to HAProxy's port with an SNI name: the certificate HAProxy shows, and the first line the backend sends. */
function terminated(port: number, servername: string): Promise<{ readonly certificate: string; readonly line: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    let certificate = '';
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      certificate = socket.getPeerCertificate().fingerprint256;
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ certificate, line: text.split('\n')[0]! }));
  });
}

/** curl through HAProxy's port with `host` resolved to loopback (so SNI is `host`): the body and the subject of the certificate it saw. */
async function curl(port: number, host: string): Promise<{ readonly body: string; readonly subject: string }> {
  const { stdout, stderr } = await run('curl', ['-sv', '-k', '--max-time', '5', '--resolve', `${host}:${port}:127.0.0.1`, `https://${host}:${port}/`]);
  return { body: stdout, subject: /subject: (.*)/.exec(stderr)?.[1]?.trim() ?? `no certificate: ${stderr}` };
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

function tlsRoute(name: string, hostname: string, listener: string, serviceName: string, port: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw, sectionName: ${listener} } ]
  hostnames: [ ${hostname} ]
  rules: [ { backendRefs: [ { name: ${serviceName}, port: ${port} } ] } ]
`;
}

function tcpRoute(a: number, b: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: { name: split, namespace: default }
spec:
  parentRefs: [ { name: gw, sectionName: tcp } ]
  rules: [ { backendRefs: [ { name: echo-a, port: 7000, weight: ${a} }, { name: echo-b, port: 7000, weight: ${b} } ] } ]
`;
}

/** Which greeter answered each of `count` connections, counted. */
async function shares(port: number, count: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const line = await greeting(port);
    counts[line] = (counts[line] ?? 0) + 1;
  }
  return counts;
}

describe('TLSRoute and TCPRoute end to end (local mode, real HAProxy)', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let passthroughPort: number;
  let terminatePort: number;
  let tcpPort: number;
  let secondA: Server;
  const servers: (Server | HttpsServer)[] = [];

  before(async () => {
    [passthroughPort, terminatePort, tcpPort] = [await reservePort(), await reservePort(), await reservePort()];
    const tls = await tlsBackend('passthrough-backend');
    const [a, b, plain] = [await greeter('echo-a'), await greeter('echo-b'), await greeter('plain')];
    secondA = await greeter('echo-a-2');
    servers.push(tls, a, b, plain, secondA);
    harness = await LocalHarness.start({
      backends: 0,
      manifests: {
        'gateway.yaml': docs(
          gateway(
            `{ name: passthrough, port: ${passthroughPort}, protocol: TLS, tls: { mode: Passthrough } }`,
            `{ name: terminate, port: ${terminatePort}, protocol: TLS, tls: { mode: Terminate, certificateRefs: [ { name: listener-tls } ] } }`,
            `{ name: tcp, port: ${tcpPort}, protocol: TCP }`,
          ),
          tlsSecret('listener-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY),
          service('tls-app', [{ port: 443, targetPort: portOf(tls as unknown as Server) }]),
          slice('tls-app-1', 'tls-app', undefined, portOf(tls as unknown as Server)),
          service('plain', [{ port: 7000, targetPort: portOf(plain) }]),
          slice('plain-1', 'plain', undefined, portOf(plain)),
          service('echo-a', [{ port: 7000, targetPort: portOf(a) }]),
          slice('echo-a-1', 'echo-a', undefined, portOf(a)),
          service('echo-b', [{ port: 7000, targetPort: portOf(b) }]),
          slice('echo-b-1', 'echo-b', undefined, portOf(b)),
        ),
        'app.yaml': tlsRoute('app', 'app.example.com', 'passthrough', 'tls-app', 443),
        'terminated.yaml': tlsRoute('terminated', 'term.example.com', 'terminate', 'plain', 7000),
        'split.yaml': tcpRoute(3, 1),
      },
    });
    await harness.next(0, 'deployed');
  });

  after(async () => {
    await harness?.stop();
    for (const server of servers) server.close();
  });

  it('passes TLS through by SNI name: curl sees the backend’s own certificate and answer', async () => {
    const seen = await curl(passthroughPort, 'app.example.com');
    expect(seen.body).to.equal('passthrough-backend');
    // The leaf's own subject (one RDN): HAProxy shows no certificate of its own on this port.
    expect(seen.subject).to.equal(new X509Certificate(LEAF_CERT).subject);
  });

  it('refuses a connection for an SNI name no route lists', async () => {
    const refused = await run('curl', ['-sk', '--max-time', '5', '--resolve', `other.example.com:${passthroughPort}:127.0.0.1`, `https://other.example.com:${passthroughPort}/`]).then(
      () => 'answered',
      (error: { code?: number }) => `curl exit ${error.code}`,
    );
    expect(refused).to.match(/^curl exit (35|56)$/);
  });

  it('ends TLS with the listener’s certificate, then sends the stream in clear text to the backend', async () => {
    const seen = await terminated(terminatePort, 'term.example.com');
    expect(seen).to.deep.equal({ certificate: fingerprint(SELF_SIGNED_CERT), line: 'plain' });
  });

  it('splits TCP connections by weight, and takes a weight change without a reload', async () => {
    // Weighted roundrobin interleaves deterministically: 3:1 is 60 of 80 give or take the cycle's phase.
    const before = await shares(tcpPort, 80);
    expect(before['echo-a']).to.be.within(56, 64);
    expect(before['echo-b']).to.be.within(16, 24);
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('split.yaml', tcpRoute(1, 1));
    await harness.next(mark, 'deployed');
    const after = await shares(tcpPort, 80);
    expect(after['echo-a']).to.be.within(36, 44);
    expect(after['echo-b']).to.be.within(36, 44);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('takes a new endpoint of a weighted Service without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('echo-a-2.yaml', slice('echo-a-2', 'echo-a', undefined, portOf(secondA)));
    await harness.next(mark, 'deployed');
    const seen = await shares(tcpPort, 40);
    expect(Object.keys(seen).sort()).to.deep.equal(['echo-a', 'echo-a-2', 'echo-b']);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('serves a new TLSRoute on the passthrough listener without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('second.yaml', tlsRoute('second', 'second.example.com', 'passthrough', 'tls-app', 443));
    await harness.next(mark, 'deployed');
    expect((await curl(passthroughPort, 'second.example.com')).body).to.equal('passthrough-backend');
    expect(await harness.reloads()).to.equal(reloads);
  });
});
