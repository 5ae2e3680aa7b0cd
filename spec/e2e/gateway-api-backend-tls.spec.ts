import { expect } from 'chai';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { reservePort } from '../support/ports.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';

/**
 * BackendTLSPolicy end to end: a local-mode controller reads a Gateway, an
 * HTTPRoute and BackendTLSPolicies from manifests, and real HTTP goes
 * through a real HAProxy to a real server on loopback that speaks TLS (its
 * certificate for shop.example.com, signed by the fixture CA) and plain
 * HTTP on the same port, and answers which one it was spoken to with.
 */

/**
 * A loopback server answering "tls <SNI>" over TLS and "plain" in clear text, told apart by the first byte (a TLS
 * handshake's 0x16), each followed by " <tag>" when it has one.
 */
class EitherServer {
  readonly tag: string;

  constructor(tag = '') {
    this.tag = tag;
  }

  readonly #sockets = new Set<Socket>();
  /** The SNI name of every TLS handshake completed, health checks' included (none: false, as Node reports it). */
  readonly handshakes: (string | false)[] = [];
  readonly #http = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    response.writeHead(200, { 'content-type': 'text/plain' });
    const tag = this.tag === '' ? '' : ` ${this.tag}`;
    response.end(socket instanceof TLSSocket ? `tls ${(socket as TLSSocket & { servername?: string }).servername}${tag}\n` : `plain${tag}\n`);
  });
  readonly server: Server = createNetServer((socket) => {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return;
      socket.unshift(first);
      if (first[0] !== 0x16) {
        this.#http.emit('connection', socket);
        return;
      }
      const secure = new TLSSocket(socket, { isServer: true, cert: LEAF_CERT, key: LEAF_KEY });
      secure.on('error', () => undefined);
      secure.on('secure', () => this.handshakes.push((secure as TLSSocket & { servername?: string | false }).servername ?? false));
      this.#http.emit('connection', secure);
    });
  });

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Listens on loopback: on a port of its own, or on `port` of another loopback address. */
  start(address = '127.0.0.1', port = 0): Promise<this> {
    return new Promise((resolve) => this.server.listen(port, address, () => resolve(this)));
  }

  stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function route(name: string, serviceName: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ ${name}.example.com ]
  rules:
    - backendRefs: [ { name: ${serviceName}, port: 443 } ]
`;
}

/** A TLSRoute on the Gateway's TLS Terminate listener for one SNI name. */
function tlsRoute(name: string, serviceName: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw, sectionName: terminate } ]
  hostnames: [ ${name}.example.com ]
  rules:
    - backendRefs: [ { name: ${serviceName}, port: 443 } ]
`;
}

/** An HTTP/1.1 request over TLS to HAProxy's port with an SNI name (HAProxy's own certificate is not checked): the whole answer. */
function overTls(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => socket.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

function policy(name: string, serviceName: string, hostname: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [ { group: '', kind: Service, name: ${serviceName}, sectionName: https } ]
  validation:
    caCertificateRefs: [ { group: '', kind: ConfigMap, name: backend-ca } ]
    hostname: ${hostname}
`;
}

/** The ConfigMap the policies name, holding `ca` as its ca.crt. */
function caConfigMap(ca: string): string {
  const pem = ca
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: backend-ca, namespace: default }\ndata:\n  ca.crt: |\n${pem}\n`;
}

describe('Gateway API BackendTLSPolicy end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let backend: EitherServer;
  let terminatePort: number;
  /** A Service `name` on the backend's port (https, 443), with its one endpoint. */
  const upstream = (name: string) => docs(service(name, [{ name: 'https', port: 443, targetPort: backend.port }]), slice(`${name}-1`, name, 'https', backend.port));

  before(async () => {
    backend = await new EitherServer().start();
    terminatePort = await reservePort();
    harness = await LocalHarness.start({
      backends: 0,
      manifests: {
        'gateway.yaml': docs(
          gateway(
            '{ name: http, port: 80, protocol: HTTP }',
            `{ name: terminate, port: ${terminatePort}, protocol: TLS, tls: { mode: Terminate, certificateRefs: [ { name: listener-tls } ] } }`,
          ),
          tlsSecret('listener-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY),
        ),
        'terminated.yaml': docs(upstream('terminated'), tlsRoute('terminated', 'terminated'), policy('terminated', 'terminated', 'shop.example.com')),
        'ca.yaml': caConfigMap(CA_CERT),
        'verified.yaml': docs(upstream('verified'), route('verified', 'verified')),
        'verified-policy.yaml': policy('verified', 'verified', 'shop.example.com'),
        'mismatch.yaml': docs(upstream('mismatch'), route('mismatch', 'mismatch'), policy('mismatch', 'mismatch', 'other.example.com')),
      },
    });
    await harness.next(0, 'deployed');
  });

  after(async () => {
    await harness?.stop();
    await backend?.stop();
  });

  const answer = async (host: string) => {
    const response = await harness.get(host, '/');
    return `${response.status} ${response.body.trim()}`;
  };

  it('speaks TLS to the Service port, with the policy hostname as SNI, verified against the CA of the ConfigMap', async () => {
    expect(await answer('verified.example.com')).to.equal('200 tls shop.example.com');
  });

  it('speaks TLS again after a TLS Terminate listener to a TLSRoute’s Service port the policy names', async () => {
    // The backend's answer passes through the TCP stream as it wrote it (chunked).
    expect(await overTls(terminatePort, 'terminated.example.com')).to.match(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\ntls shop\.example\.com\n/);
  });

  it('refuses a server whose certificate does not carry the policy hostname: 503, never served unverified', async () => {
    const status = (await harness.get('mismatch.example.com', '/')).status;
    expect([502, 503]).to.include(status);
  });

  it('sends the policy hostname as SNI on health checks too (HAProxy sends none without check-sni)', async () => {
    // One request was served over a completed handshake (the mismatched policy's never complete): the others are HAProxy's checks.
    await eventually(
      async () => backend.handshakes.length,
      (count) => count >= 3,
      'health checks over TLS',
    );
    expect([...new Set(backend.handshakes)]).to.deep.equal(['shop.example.com']);
  });

  it('adds an endpoint to the Service port through the Runtime API, without a reload, spoken to as the policy says', async () => {
    const second = await new EitherServer('second').start('127.0.0.2', backend.port);
    try {
      const before = await harness.reloads();
      const mark = harness.mark();
      await harness.write(
        'verified.yaml',
        docs(
          service('verified', [{ name: 'https', port: 443, targetPort: backend.port }]),
          slice('verified-1', 'verified', 'https', backend.port, true, { addresses: ['127.0.0.1', '127.0.0.2'] }),
          route('verified', 'verified'),
        ),
      );
      await harness.next(mark, 'deployed');
      await eventually(
        () => answer('verified.example.com'),
        (text) => text === '200 tls shop.example.com second',
        'the new endpoint answering over TLS',
      );
      expect(await harness.reloads()).to.equal(before);
    } finally {
      // The next cases find the Service as they began: one endpoint.
      const mark = harness.mark();
      await harness.write('verified.yaml', docs(upstream('verified'), route('verified', 'verified')));
      await harness.next(mark, 'deployed');
      await second.stop();
    }
  });

  it('follows the ConfigMap: another CA in its ca.crt refuses the server (503), the signing CA back serves it again', async () => {
    let mark = harness.mark();
    await harness.write('ca.yaml', caConfigMap(SELF_SIGNED_CERT));
    await harness.next(mark, 'deployed');
    await eventually(
      () => answer('verified.example.com'),
      (text) => /^50[23] /.test(text),
      'the server refused under another CA',
    );
    mark = harness.mark();
    await harness.write('ca.yaml', caConfigMap(CA_CERT));
    await harness.next(mark, 'deployed');
    expect(
      await eventually(
        () => answer('verified.example.com'),
        (text) => text.startsWith('200 '),
        'the server served again',
      ),
    ).to.equal('200 tls shop.example.com');
  });

  it('speaks plain HTTP to the Service port again once its policy is removed', async () => {
    const mark = harness.mark();
    await harness.remove('verified-policy.yaml');
    await harness.next(mark, 'deployed');
    expect(
      await eventually(
        () => answer('verified.example.com'),
        (text) => text === '200 plain',
        'plain HTTP to the backend',
      ),
    ).to.equal('200 plain');
  });
});
