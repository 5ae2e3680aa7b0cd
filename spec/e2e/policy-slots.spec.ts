import { expect } from 'chai';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice } from '../support/manifest-builders.ts';

/**
 * Requests that cost the same with many policies
 * (docs/adr/0025-requests-cost-the-same-with-many-policies.md), end to end:
 * a header match looked up by its shape with the request's own value, and
 * header changes and an upstream Host whose values policies.map holds. A new
 * HTTPRoute whose match has a served shape, and one whose filters change
 * served header slots with values of their own (spaces, '%' and '#'
 * included), are map lines alone: served without a reload.
 */

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** What the backend saw: its name, and the request's headers. */
  readonly seen: { readonly backend: string; readonly headers: IncomingHttpHeaders } | undefined;
}

async function echoBackend(name: string): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ backend: name, headers: req.headers }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

function ask(harness: LocalHarness, host: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: harness.ports.http, path: '/', headers: { host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, seen: res.statusCode === 200 ? (JSON.parse(body) as Answer['seen']) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

function httpRoute(name: string, hostname: string, rules: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ ${hostname} ]
  rules:
${rules}`;
}

/** Requests with X-Tenant `tenant` to echo-b, the others to echo-a. */
const tenantRoute = (name: string, tenant: string) =>
  httpRoute(
    name,
    `${name}.example.com`,
    `    - { matches: [ { headers: [ { name: X-Tenant, value: ${tenant} } ] } ], backendRefs: [ { name: echo-b, port: 80 } ] }
    - { backendRefs: [ { name: echo-a, port: 80 } ] }
`,
  );

/** Sets X-Route and X-Served and adds X-Extra, each to a value of its own, and sends Host `upstream`. */
const teamRoute = (name: string, route: string, extra: string, served: string, upstream: string) =>
  httpRoute(
    name,
    `${name}.example.com`,
    `    - backendRefs: [ { name: echo-a, port: 80 } ]
      filters:
        - { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: X-Route, value: "${route}" } ], add: [ { name: X-Extra, value: "${extra}" } ] } }
        - { type: ResponseHeaderModifier, responseHeaderModifier: { set: [ { name: X-Served, value: "${served}" } ] } }
        - { type: URLRewrite, urlRewrite: { hostname: ${upstream} } }
`,
  );

describe('policies and condition sets through map lookups, end to end', function () {
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
        gateway('{ name: http, port: 80, protocol: HTTP }'),
        service('echo-a', [{ port: 80, targetPort: portOf(echoA) }]),
        slice('echo-a-1', 'echo-a', undefined, portOf(echoA)),
        service('echo-b', [{ port: 80, targetPort: portOf(echoB) }]),
        slice('echo-b-1', 'echo-b', undefined, portOf(echoB)),
      ),
    );
    await harness.write('routes.yaml', docs(tenantRoute('tenant-one', 'one'), teamRoute('team-one', 'team 1', '50%', 'first', 'one.internal')));
    await eventually(
      () => Promise.all([ask(harness, 'tenant-one.example.com'), ask(harness, 'team-one.example.com')]),
      (answers) => answers.every((answer) => answer.status === 200),
      'the routes to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    for (const server of [echoA, echoB]) server?.closeAllConnections();
    await Promise.all([echoA, echoB].map((server) => server && new Promise((resolve) => server.close(resolve))));
  });

  it("routes by a header match looked up with the request's own value, a missing header or another value going on to the next rule", async () => {
    expect((await ask(harness, 'tenant-one.example.com', { 'x-tenant': 'one' })).seen?.backend).to.equal('b');
    expect((await ask(harness, 'tenant-one.example.com', { 'x-tenant': 'two' })).seen?.backend).to.equal('a');
    expect((await ask(harness, 'tenant-one.example.com')).seen?.backend).to.equal('a');
    // A value holding the separator of the lookup key matches nothing.
    expect((await ask(harness, 'tenant-one.example.com', { 'x-tenant': 'one|' })).seen?.backend).to.equal('a');
  });

  it('sets and adds request headers, sets a response header and sends the upstream Host from policies.map values', async () => {
    const answer = await ask(harness, 'team-one.example.com');
    expect(answer.seen?.headers).to.include({ 'x-route': 'team 1', 'x-extra': '50%', host: 'one.internal' });
    expect(answer.headers['x-served']).to.equal('first');
    expect((await ask(harness, 'tenant-one.example.com', { 'x-route': 'kept' })).seen?.headers['x-route']).to.equal('kept');
  });

  it('serves a new route whose match has a served shape, and one whose header changes are in served slots, without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('more.yaml', docs(tenantRoute('tenant-two', 'two'), teamRoute('team-two', 'team#2 +x', '100% sure', 'second', 'two.internal')));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode, JSON.stringify(deployed.result)).to.equal('runtime');
    expect((await ask(harness, 'tenant-two.example.com', { 'x-tenant': 'two' })).seen?.backend).to.equal('b');
    expect((await ask(harness, 'tenant-two.example.com', { 'x-tenant': 'one' })).seen?.backend).to.equal('a');
    expect((await ask(harness, 'tenant-one.example.com', { 'x-tenant': 'two' })).seen?.backend).to.equal('a');
    const answer = await ask(harness, 'team-two.example.com');
    expect(answer.seen?.headers).to.include({ 'x-route': 'team#2 +x', 'x-extra': '100% sure', host: 'two.internal' });
    expect(answer.headers['x-served']).to.equal('second');
    expect((await ask(harness, 'team-one.example.com')).seen?.headers['x-route']).to.equal('team 1');
    expect(await harness.reloads()).to.equal(reloads);
  });
});
