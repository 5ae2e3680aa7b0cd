import { expect } from 'chai';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, ingress, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { Mirror } from '../support/mirror-backend.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { OTHER_SHOP_CERT, OTHER_SHOP_KEY } from '../support/tls-refused-fixture.ts';

/**
 * HTTPRoute behaviours of the Gateway API's core conformance scenarios that
 * turn on the specification's defaults, end to end in local mode with a
 * real HAProxy and real HTTP(S): the port of a RequestRedirect
 * (HTTPRouteRedirectScheme, HTTPRouteRedirectPortAndScheme), an HTTPS
 * listener without a hostname (HTTPRouteHTTPSListener), rules without
 * backendRefs (HTTPRouteOmittedBackendRefs), a v1 ReferenceGrant
 * (HTTPRouteReferenceGrant), several RequestMirror filters in one rule
 * (HTTPRouteRequestMultipleMirrors), redirect codes 303, 307 and 308
 * (HTTPRoute303Redirect, ...), named rules (HTTPRouteNamedRule) and a
 * WebSocket backend (HTTPRouteBackendProtocolWebSocket).
 */

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

async function echoBackend(name: string): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(name);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** One request through HAProxy: `host` is the Host header as sent (a port included) and, over TLS, the server name without it. */
function ask(harness: LocalHarness, host: string, path: string, tls = false, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const common = { host: '127.0.0.1', path, method, headers: { host }, agent: false as const };
    const done = (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    };
    const servername = host.split(':')[0]!;
    const req = tls ? httpsRequest({ ...common, port: harness.ports.https, servername, rejectUnauthorized: false }, done) : request({ ...common, port: harness.ports.http }, done);
    req.on('error', reject);
    req.end();
  });
}

/** An HTTPRoute on the Gateway (or the listener `parentRef` selects); `hostnames` in YAML flow style; `rules` indented by four spaces. */
function httpRoute(name: string, hostnames: string, rules: string, parentRef = '{ name: gw }', namespace = 'default'): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  parentRefs: [ ${parentRef} ]
  hostnames: ${hostnames}
  rules:
${rules}`;
}

const to = (serviceName: string) => `backendRefs: [ { name: ${serviceName}, port: 80 } ]`;

/** A rule answering requests under `path` with a RequestRedirect of these fields (YAML flow style). */
const redirectRule = (path: string, fields: string) => `    - matches: [ { path: { type: PathPrefix, value: ${path} } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { ${fields} } } ]
`;

const GATEWAY = gateway(
  '{ name: http, port: 80, protocol: HTTP }',
  // After the conformance Gateway same-namespace-with-https-listener: one HTTPS listener for every name, one for a hostname.
  '{ name: https, port: 443, protocol: HTTPS, tls: { mode: Terminate, certificateRefs: [ { name: listener-tls } ] } }',
  '{ name: https-with-hostname, port: 443, protocol: HTTPS, hostname: second.example.org, tls: { mode: Terminate, certificateRefs: [ { name: listener-tls } ] } }',
);

/** RFC 6455 section 4.2.2: the Sec-WebSocket-Accept a server answers a key with. */
const acceptOf = (key: string) => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

/** A WebSocket backend: it accepts the upgrade, then sends back every byte it gets. */
async function webSocketEcho(): Promise<Server> {
  const server = createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptOf(String(req.headers['sec-websocket-key']))}\r\n\r\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A WebSocket upgrade through HAProxy, then `text` sent on the upgraded connection: the status, whether the accept key is right, and what came back. */
function upgradeAndEcho(harness: LocalHarness, host: string, text: string): Promise<{ status: number; accepted: boolean; echo: string }> {
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const headers = { host, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': key };
    const req = request({ host: '127.0.0.1', port: harness.ports.http, path: '/chat', headers, agent: false });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, accepted: false, echo: '' });
    });
    req.on('upgrade', (res, socket, head) => {
      let echo = head.toString('utf8');
      const done = () => {
        socket.destroy();
        resolve({ status: res.statusCode ?? 0, accepted: res.headers['sec-websocket-accept'] === acceptOf(key), echo });
      };
      socket.on('data', (chunk: Buffer) => {
        echo += chunk.toString('utf8');
        if (echo.length >= text.length) done();
      });
      socket.on('error', reject);
      socket.write(text);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The Location of a redirect, with its status. */
async function location(harness: LocalHarness, host: string, path: string, tls = false): Promise<string> {
  const answer = await ask(harness, host, path, tls);
  return `${answer.status} ${answer.headers.location}`;
}

describe('Gateway API HTTPRoute core conformance end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echoA: Server;
  let echoB: Server;

  before(async () => {
    echoA = await echoBackend('a');
    echoB = await echoBackend('b');
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    await harness.write(
      'services.yaml',
      docs(
        GATEWAY,
        tlsSecret('listener-tls', LEAF_CERT, LEAF_KEY),
        service('echo-a', [{ port: 80, targetPort: portOf(echoA) }]),
        slice('echo-a-1', 'echo-a', undefined, portOf(echoA)),
        service('echo-b', [{ port: 80, targetPort: portOf(echoB) }]),
        slice('echo-b-1', 'echo-b', undefined, portOf(echoB)),
      ),
    );
    await harness.write('base.yaml', httpRoute('base', '[ base.example.com ]', `    - { ${to('echo-a')} }\n`));
    await eventually(
      () => ask(harness, 'base.example.com', '/'),
      (answer) => answer.status === 200,
      'the base route to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    for (const server of [echoA, echoB]) server?.closeAllConnections();
    await Promise.all([echoA, echoB].map((server) => server && new Promise((resolve) => server.close(resolve))));
  });

  // After HTTPRouteRedirectScheme and HTTPRouteRedirectPortAndScheme (the listeners on 80 and 443), asked with the
  // port of a NodePort in the Host header: a redirect never keeps it.
  it("answers a RequestRedirect with the scheme's well-known port when it sets a scheme and no port, the listener's when it sets neither, and leaves a scheme's default port out of Location", async () => {
    const mark = harness.mark();
    await harness.write(
      'redirect.yaml',
      httpRoute(
        'redirect',
        '[ redirect.example.com ]',
        redirectRule('/scheme-and-status', 'scheme: https, statusCode: 301') +
          redirectRule('/scheme-and-host', 'scheme: https, hostname: example.org') +
          redirectRule('/scheme', 'scheme: https') +
          redirectRule('/scheme-nil-and-port-nil', 'hostname: example.org') +
          redirectRule('/scheme-nil-and-port-80', 'hostname: example.org, port: 80') +
          redirectRule('/scheme-nil-and-port-443', 'hostname: example.org, port: 443') +
          redirectRule('/scheme-nil-and-port-8080', 'hostname: example.org, port: 8080') +
          redirectRule('/scheme-https-and-port-443', 'scheme: https, hostname: example.org, port: 443') +
          redirectRule('/scheme-https-and-port-8443', 'scheme: https, hostname: example.org, port: 8443') +
          redirectRule('/scheme-http-and-port-80', 'scheme: http, hostname: example.org, port: 80') +
          redirectRule('/scheme-http-and-port-nil', 'scheme: http, hostname: example.org'),
      ),
    );
    await harness.log.waitFor(mark, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed', 'the redirects deployed');
    await eventually(
      () => ask(harness, 'redirect.example.com', '/scheme'),
      (answer) => answer.status === 302,
      'the redirects to be served',
      15_000,
    );
    const host = 'redirect.example.com:30080';
    expect(await location(harness, host, '/scheme/a?b=1')).to.equal('302 https://redirect.example.com/scheme/a?b=1');
    expect(await location(harness, host, '/scheme-and-status')).to.equal('301 https://redirect.example.com/scheme-and-status');
    expect(await location(harness, host, '/scheme-and-host')).to.equal('302 https://example.org/scheme-and-host');
    // Over the listener on port 80.
    expect(await location(harness, host, '/scheme-nil-and-port-nil')).to.equal('302 http://example.org/scheme-nil-and-port-nil');
    expect(await location(harness, host, '/scheme-nil-and-port-80')).to.equal('302 http://example.org/scheme-nil-and-port-80');
    expect(await location(harness, host, '/scheme-nil-and-port-8080')).to.equal('302 http://example.org:8080/scheme-nil-and-port-8080');
    expect(await location(harness, host, '/scheme-https-and-port-443')).to.equal('302 https://example.org/scheme-https-and-port-443');
    expect(await location(harness, host, '/scheme-https-and-port-8443')).to.equal('302 https://example.org:8443/scheme-https-and-port-8443');
    // Over the listener on port 443: the request's scheme stays, and so does which port is its default.
    expect(await location(harness, 'redirect.example.com:30443', '/scheme-nil-and-port-nil', true)).to.equal('302 https://example.org/scheme-nil-and-port-nil');
    expect(await location(harness, 'redirect.example.com:30443', '/scheme-nil-and-port-443', true)).to.equal('302 https://example.org/scheme-nil-and-port-443');
    expect(await location(harness, 'redirect.example.com:30443', '/scheme-nil-and-port-80', true)).to.equal('302 https://example.org:80/scheme-nil-and-port-80');
    expect(await location(harness, 'redirect.example.com:30443', '/scheme-http-and-port-nil', true)).to.equal('302 http://example.org/scheme-http-and-port-nil');
    expect(await location(harness, 'redirect.example.com:30443', '/scheme-http-and-port-80', true)).to.equal('302 http://example.org/scheme-http-and-port-80');
  });

  // After HTTPRoute303Redirect (a POST), HTTPRoute307Redirect and HTTPRoute308Redirect: the redirect never followed.
  it('answers a RequestRedirect with the statusCode 303, 307 or 308 it sets, to a POST as to a GET, the path kept', async () => {
    const mark = harness.mark();
    const codes = { '/see-other': 303, '/temporary': 307, '/permanent': 308 };
    const rules = Object.entries(codes).map(([path, code]) => redirectRule(path, `statusCode: ${code}`));
    await harness.write('redirect-codes.yaml', httpRoute('redirect-codes', '[ codes.example.com ]', rules.join('')));
    await harness.log.waitFor(mark, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed', 'the redirects deployed');
    await eventually(
      () => ask(harness, 'codes.example.com', '/see-other'),
      (answer) => answer.status === 303,
      'the redirects to be served',
      15_000,
    );
    for (const [path, code] of Object.entries(codes)) {
      for (const method of ['GET', 'POST']) {
        const answer = await ask(harness, 'codes.example.com', path, false, method);
        expect([method, answer.status, new URL(String(answer.headers.location)).pathname]).to.deep.equal([method, code, path]);
      }
    }
  });

  // After HTTPRouteNamedRule: a rule's name changes nothing it serves.
  it('serves a named rule and an unnamed one of one route, each to its backend', async () => {
    const mark = harness.mark();
    const rules = `    - { name: named-rule, matches: [ { path: { type: PathPrefix, value: /named } } ], ${to('echo-a')} }\n    - { matches: [ { path: { type: PathPrefix, value: /unnamed } } ], ${to('echo-b')} }\n`;
    await harness.write('named.yaml', httpRoute('named', '[ named.example.com ]', rules));
    await harness.log.waitFor(mark, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed', 'the named route deployed');
    const named = await eventually(
      () => ask(harness, 'named.example.com', '/named'),
      (answer) => answer.status === 200,
      'the named rule to be served',
      15_000,
    );
    expect(named.body).to.equal('a');
    const unnamed = await ask(harness, 'named.example.com', '/unnamed');
    expect([unnamed.status, unnamed.body]).to.deep.equal([200, 'b']);
  });

  // After HTTPRouteBackendProtocolWebSocket: a Service port of appProtocol kubernetes.io/ws, spoken to in HTTP/1.1,
  // whose upgrade HAProxy passes on and whose connection it then tunnels.
  it('passes a WebSocket upgrade to a Service port of appProtocol kubernetes.io/ws, then the bytes both ways', async () => {
    const echo = await webSocketEcho();
    try {
      const mark = harness.mark();
      const wsService = `apiVersion: v1\nkind: Service\nmetadata: { name: ws-echo, namespace: default }\nspec:\n  ports:\n    - { name: ws, port: 8082, appProtocol: kubernetes.io/ws, targetPort: ${portOf(echo)} }\n`;
      const route = httpRoute('ws', '[ ws.example.com ]', `    - backendRefs: [ { name: ws-echo, port: 8082 } ]\n`);
      await harness.write('ws.yaml', docs(wsService, slice('ws-echo-1', 'ws-echo', 'ws', portOf(echo)), route));
      await harness.log.waitFor(mark, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed', 'the WebSocket route deployed');
      const answer = await eventually(
        () => upgradeAndEcho(harness, 'ws.example.com', 'ping through the tunnel'),
        (result) => result.status === 101,
        'the WebSocket route to be served',
        15_000,
      );
      expect(answer).to.deep.equal({ status: 101, accepted: true, echo: 'ping through the tunnel' });
    } finally {
      echo.closeAllConnections();
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  // After HTTPRouteOmittedBackendRefs.
  it('answers 500 for a rule whose backendRefs are omitted or empty, where a shorter match would otherwise answer, and serves a second one without a reload', async () => {
    const omitted = (name: string) =>
      httpRoute(
        name,
        `[ ${name}.example.com ]`,
        `    - matches: [ { path: { type: Exact, value: /omitted-no-forward } } ]
    - matches: [ { path: { type: Exact, value: /empty-no-forward } } ]
      backendRefs: []
    - { matches: [ { path: { type: PathPrefix, value: / } } ], ${to('echo-a')} }
`,
        '{ name: gw, sectionName: http }',
      );
    let mark = harness.mark();
    await harness.write('omitted-1.yaml', omitted('omitted-1'));
    await harness.next(mark, 'deployed');
    await eventually(
      () => ask(harness, 'omitted-1.example.com', '/forward'),
      (answer) => answer.status === 200,
      'the route to be served',
      15_000,
    );
    expect((await ask(harness, 'omitted-1.example.com', '/forward')).body).to.equal('a');
    const answer = await ask(harness, 'omitted-1.example.com', '/omitted-no-forward');
    expect([answer.status, answer.body]).to.deep.equal([500, '500 Internal Server Error: no backend of the route can take this request.']);
    expect((await ask(harness, 'omitted-1.example.com', '/empty-no-forward')).status).to.equal(500);
    const reloads = await harness.reloads();
    mark = harness.mark();
    await harness.write('omitted-2.yaml', omitted('omitted-2'));
    const second = await harness.next(mark, 'deployed');
    expect([second.result.mode, second.result.reloadReason]).to.deep.equal(['runtime', undefined]);
    expect((await ask(harness, 'omitted-2.example.com', '/omitted-no-forward')).status).to.equal(500);
    expect((await ask(harness, 'omitted-2.example.com', '/x')).body).to.equal('a');
    expect(await harness.reloads()).to.equal(reloads);
  });

  // After HTTPRouteReferenceGrant, with the ReferenceGrant of gateway.networking.k8s.io/v1 (standard since v1.5).
  it('serves a backendRef to another namespace that a v1 ReferenceGrant allows, and only the Service it names', async () => {
    const mark = harness.mark();
    await harness.write(
      'granted.yaml',
      docs(
        service('echo-other', [{ port: 80, targetPort: portOf(echoB) }], 'other'),
        slice('echo-other-1', 'echo-other', undefined, portOf(echoB), true, { namespace: 'other' }),
        service('echo-hidden', [{ port: 80, targetPort: portOf(echoB) }], 'other'),
        slice('echo-hidden-1', 'echo-hidden', undefined, portOf(echoB), true, { namespace: 'other' }),
        `apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: { name: routes-from-default, namespace: other }
spec:
  from: [ { group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default } ]
  to: [ { group: "", kind: Service, name: echo-other } ]
`,
        httpRoute(
          'granted',
          '[ granted.example.com ]',
          `    - { matches: [ { path: { type: PathPrefix, value: /granted } } ], backendRefs: [ { name: echo-other, namespace: other, port: 80 } ] }
    - { matches: [ { path: { type: PathPrefix, value: /hidden } } ], backendRefs: [ { name: echo-hidden, namespace: other, port: 80 } ] }
`,
        ),
      ),
    );
    await harness.next(mark, 'deployed');
    const granted = await eventually(
      () => ask(harness, 'granted.example.com', '/granted'),
      (answer) => answer.status !== 404,
      'the route to be served',
      15_000,
    );
    expect([granted.status, granted.body]).to.deep.equal([200, 'b']);
    expect((await ask(harness, 'granted.example.com', '/hidden')).status).to.equal(500);
  });

  // After HTTPRouteRequestMultipleMirrors.
  it('copies each request to every RequestMirror of its rule and answers from the backend alone', async () => {
    const mirrors = await Promise.all([Mirror.start(), Mirror.start()]);
    try {
      const [first, second] = mirrors as [Mirror, Mirror];
      const mirrorTo = (serviceName: string) => `{ type: RequestMirror, requestMirror: { backendRef: { name: ${serviceName}, port: 80 } } }`;
      await harness.write(
        'mirrors.yaml',
        docs(
          service('mirror-one', [{ port: 80, targetPort: first.port }]),
          slice('mirror-one-1', 'mirror-one', undefined, first.port),
          service('mirror-two', [{ port: 80, targetPort: second.port }]),
          slice('mirror-two-1', 'mirror-two', undefined, second.port),
          httpRoute(
            'mirrors',
            '[ mirrors.example.com ]',
            `    - matches: [ { path: { type: PathPrefix, value: /multi-mirror } } ]
      filters: [ ${mirrorTo('mirror-one')}, ${mirrorTo('mirror-two')} ]
      ${to('echo-a')}
`,
          ),
        ),
      );
      await eventually(
        () => ask(harness, 'mirrors.example.com', '/multi-mirror/probe'),
        (answer) => answer.status === 200,
        'the mirrored route to be served',
        15_000,
      );
      const answer = await ask(harness, 'mirrors.example.com', '/multi-mirror/one?q=1');
      expect([answer.status, answer.body]).to.deep.equal([200, 'a']);
      for (const mirror of [first, second]) {
        const copy = await eventually(
          async () => mirror.copies.find((c) => c.url === '/multi-mirror/one?q=1'),
          (c) => c !== undefined,
          `the copy at the mirror on port ${mirror.port}`,
        );
        expect(copy!.headers['host']).to.equal('mirrors.example.com');
      }
    } finally {
      await Promise.all(mirrors.map((mirror) => mirror.stop()));
    }
  });

  // After HTTPRouteHTTPSListener.
  it("serves every name over an HTTPS listener without a hostname, with its certificate, and a hostname listener's routes for its name", async () => {
    const mark = harness.mark();
    await harness.write(
      'https.yaml',
      docs(
        httpRoute('https-test', '[ example.org ]', `    - { ${to('echo-a')} }\n`, '{ name: gw, sectionName: https }'),
        httpRoute('https-test-no-hostname', '[]', `    - { ${to('echo-b')} }\n`, '{ name: gw, sectionName: https-with-hostname }'),
      ),
    );
    await harness.next(mark, 'deployed');
    await eventually(
      () => ask(harness, 'example.org', '/', true),
      (answer) => answer.status === 200,
      'the HTTPS routes to be served',
      15_000,
    );
    const certificate = new X509Certificate(LEAF_CERT).fingerprint256;
    for (const name of ['example.org', 'unknown-example.org', 'second.example.org']) expect(await harness.handshake(name), name).to.equal(certificate);
    expect((await ask(harness, 'example.org', '/', true)).body).to.equal('a');
    expect((await ask(harness, 'unknown-example.org', '/', true)).status).to.equal(404);
    expect((await ask(harness, 'second.example.org', '/', true)).body).to.equal('b');

    // Tenant isolation kept: hosts an Ingress namespace holds get its own certificate, or a refused handshake
    // without one (never the listener's); a new route needs no reload.
    let next = harness.mark();
    await harness.write(
      'tenant.yaml',
      docs(
        tlsSecret('tenant-tls', OTHER_SHOP_CERT, OTHER_SHOP_KEY, 'tenant'),
        service('web', [{ port: 80, targetPort: portOf(echoB) }], 'tenant'),
        slice('web-1', 'web', undefined, portOf(echoB), true, { namespace: 'tenant' }),
        ingress('plain', 'plain.tenant.example', [['/', 'Prefix', 'web', { number: 80 }]], undefined, { namespace: 'tenant' }),
        ingress('wild', '*.wild.tenant.example', [['/', 'Prefix', 'web', { number: 80 }]], undefined, { namespace: 'tenant' }),
        ingress('secured', 'secured.tenant.example', [['/', 'Prefix', 'web', { number: 80 }]], 'tenant-tls', { namespace: 'tenant' }),
      ),
    );
    await harness.next(next, 'deployed');
    // The tenant's objects may be deployed in more than one step (the watcher may read the file while it is
    // written): the handshakes are awaited, and the next mark comes after the last deployment.
    await harness.untilHandshake('secured.tenant.example', new X509Certificate(OTHER_SHOP_CERT).fingerprint256);
    await eventually(
      () => ask(harness, 'plain.tenant.example', '/'),
      (answer) => answer.body === 'b',
      "the tenant's Ingress to be served",
      15_000,
    );
    await harness.settled();
    expect(await harness.handshake('plain.tenant.example')).to.match(/^refused/);
    expect(await harness.handshake('x.wild.tenant.example')).to.match(/^refused/);
    expect(await harness.handshake('unknown-example.org')).to.equal(certificate);
    const afterTenant = await harness.reloads();
    next = harness.mark();
    await harness.write('https-new.yaml', httpRoute('https-new', '[ third.example.org ]', `    - { ${to('echo-b')} }\n`, '{ name: gw, sectionName: https }'));
    const deployed = await harness.next(next, 'deployed');
    expect([deployed.result.mode, deployed.result.reloadReason]).to.deep.equal(['runtime', undefined]);
    expect((await ask(harness, 'third.example.org', '/', true)).body).to.equal('b');
    expect(await harness.reloads()).to.equal(afterTenant);
  });
});
