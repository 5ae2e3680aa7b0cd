import { expect } from 'chai';
import { ask, EchoBackend, type Answer } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice } from '../support/manifest-builders.ts';

/**
 * The HTTPRoute CORS filter end to end in local mode, with a real HAProxy
 * and real preflights: the cases of the upstream conformance scenario
 * HTTPRouteCORS (conformance/tests/httproute-cors.go and its manifests),
 * on the same routes.
 */

const ROUTES = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: cors, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ cors.example.com ]
  rules:
    - matches: [ { path: { type: PathPrefix, value: /cors-1 } } ]
      backendRefs: [ { name: echo, port: 80 } ]
      filters:
        - type: CORS
          cors:
            allowOrigins: [ "https://www.foo.com", "https://*.bar.com" ]
            allowMethods: [ GET, OPTIONS ]
            allowHeaders: [ x-header-1, x-header-2 ]
            exposeHeaders: [ x-header-3, x-header-4 ]
            allowCredentials: true
            maxAge: 3600
    - matches: [ { path: { type: PathPrefix, value: /cors-2 } } ]
      backendRefs: [ { name: echo, port: 80 } ]
      filters: [ { type: CORS, cors: { allowOrigins: [ "https://www.foo.com" ], allowMethods: [ "*" ] } } ]
    - matches: [ { path: { type: PathPrefix, value: /cors-wildcard-origin } } ]
      backendRefs: [ { name: echo, port: 80 } ]
      filters: [ { type: CORS, cors: { allowOrigins: [ "*" ], allowMethods: [ PUT ], allowCredentials: false } } ]
    - matches: [ { path: { type: PathPrefix, value: /cors-wildcard-methods-headers } } ]
      backendRefs: [ { name: echo, port: 80 } ]
      filters: [ { type: CORS, cors: { allowOrigins: [ "*" ], allowMethods: [ "*" ], allowHeaders: [ "*" ], exposeHeaders: [ "*" ], allowCredentials: true } } ]
    - matches: [ { path: { type: PathPrefix, value: /cors-wildcard-methods-headers-unauth } } ]
      backendRefs: [ { name: echo, port: 80 } ]
      filters: [ { type: CORS, cors: { allowOrigins: [ "*" ], allowMethods: [ "*" ], allowHeaders: [ "*" ], allowCredentials: false } } ]
`;

function preflight(harness: LocalHarness, path: string, origin: string, method: string, headers?: string): Promise<Answer> {
  return ask(harness, 'cors.example.com', path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, ...(headers === undefined ? {} : { 'access-control-request-headers': headers }) },
  });
}

/** The CORS headers of an answer, whitespace after commas dropped as the conformance suite ignores it. */
function corsHeaders(answer: Answer): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answer.headers)
      .filter(([name]) => name.startsWith('access-control-'))
      .map(([name, value]) => [name, String(value).replace(/,\s+/g, ',')]),
  );
}

describe('Gateway API HTTPRoute CORS filter end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;

  before(async () => {
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    await harness.write(
      'gateway.yaml',
      docs(gateway('{ name: http, port: 80, protocol: HTTP }'), service('echo', [{ port: 80, targetPort: echo.port }]), slice('echo-1', 'echo', undefined, echo.port), ROUTES),
    );
    await eventually(
      () => ask(harness, 'cors.example.com', '/cors-1'),
      (answer) => answer.status === 200,
      'the CORS routes to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  it('answers a preflight from an exact or a wildcard origin itself, with every allow header, the expose headers, the max age and the credentials', async () => {
    const expected = (origin: string) => ({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'GET,OPTIONS',
      'access-control-allow-headers': 'x-header-1,x-header-2',
      'access-control-expose-headers': 'x-header-3,x-header-4',
      'access-control-max-age': '3600',
      'access-control-allow-credentials': 'true',
    });
    // "*." stands for any number of labels: www.bar.com and xpto.www.bar.com alike.
    for (const origin of ['https://www.foo.com', 'https://www.bar.com', 'https://xpto.www.bar.com']) {
      const answer = await preflight(harness, '/cors-1', origin, 'GET', 'x-header-1, x-header-2');
      expect(answer.status, origin).to.equal(204);
      expect(corsHeaders(answer), origin).to.deep.equal(expected(origin));
    }
  });

  it('sends no allow headers to an origin not allowed, for a preflight or an actual request', async () => {
    for (const origin of ['https://foobar.com', 'https://bar.com', 'http://www.foo.com', 'https://www.foo.com:8443']) {
      const refused = await preflight(harness, '/cors-1', origin, 'GET');
      expect([200, 204, 403], origin).to.include(refused.status);
      expect(refused.headers, origin).not.to.have.property('access-control-allow-origin');
      const actual = await ask(harness, 'cors.example.com', '/cors-1', { headers: { origin } });
      expect(actual.status, origin).to.equal(200);
      expect(actual.headers, origin).not.to.have.property('access-control-allow-origin');
    }
  });

  it('adds the allow origin, the credentials and the expose headers to the answer of an actual request from an allowed origin', async () => {
    for (const origin of ['https://www.foo.com', 'https://www.bar.com']) {
      const answer = await ask(harness, 'cors.example.com', '/cors-1', { headers: { origin } });
      expect(answer.status, origin).to.equal(200);
      expect(corsHeaders(answer), origin).to.deep.equal({
        'access-control-allow-origin': origin,
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'x-header-3,x-header-4',
      });
    }
  });

  it('answers "*" methods without credentials with "*", the max age defaulting to 5 seconds and no credentials header', async () => {
    const answer = await preflight(harness, '/cors-2', 'https://www.foo.com', 'POST');
    expect(answer.status).to.equal(204);
    expect(corsHeaders(answer)).to.deep.equal({ 'access-control-allow-origin': 'https://www.foo.com', 'access-control-allow-methods': '*', 'access-control-max-age': '5' });
  });

  it('answers any origin without credentials with "*", a port in the origin included', async () => {
    for (const origin of ['https://foobar.com', 'https://foobar.com:12345']) {
      const answer = await preflight(harness, '/cors-wildcard-origin', origin, 'PUT');
      expect(corsHeaders(answer), origin).to.deep.equal({ 'access-control-allow-origin': '*', 'access-control-allow-methods': 'PUT', 'access-control-max-age': '5' });
      const actual = await ask(harness, 'cors.example.com', '/cors-wildcard-origin', { method: 'PUT', headers: { origin } });
      expect(actual.status, origin).to.equal(200);
      expect(corsHeaders(actual), origin).to.deep.equal({ 'access-control-allow-origin': '*' });
    }
  });

  it('never answers a wildcard with "*" when credentials are allowed: the origin, method and headers asked for, and the answer\'s own header names', async () => {
    const answer = await preflight(harness, '/cors-wildcard-methods-headers', 'https://other.foo.com', 'PUT', 'x-header-1, x-header-2');
    expect(answer.status).to.equal(204);
    expect(corsHeaders(answer)).to.deep.equal({
      'access-control-allow-origin': 'https://other.foo.com',
      'access-control-allow-methods': 'PUT',
      'access-control-allow-headers': 'x-header-1,x-header-2',
      'access-control-max-age': '5',
      'access-control-allow-credentials': 'true',
    });
    // Without Access-Control-Request-Headers, no Access-Control-Allow-Headers.
    const bare = await preflight(harness, '/cors-wildcard-methods-headers', 'https://other.foo.com', 'DELETE');
    expect(corsHeaders(bare)).to.include({ 'access-control-allow-methods': 'DELETE' });
    expect(bare.headers).not.to.have.property('access-control-allow-headers');
    const actual = await ask(harness, 'cors.example.com', '/cors-wildcard-methods-headers', { headers: { origin: 'https://other.foo.com' } });
    expect(actual.status).to.equal(200);
    expect(actual.headers['access-control-allow-origin']).to.equal('https://other.foo.com');
    expect(actual.headers['access-control-allow-credentials']).to.equal('true');
    expect(String(actual.headers['access-control-expose-headers']).split(',')).to.include.members(['content-type', 'date']);
  });

  it('answers wildcards without credentials with "*" and no credentials header', async () => {
    const answer = await preflight(harness, '/cors-wildcard-methods-headers-unauth', 'https://other.foo.com', 'PUT', 'x-header-1, x-header-2');
    expect(corsHeaders(answer)).to.deep.equal({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': '*',
      'access-control-allow-headers': '*',
      'access-control-max-age': '5',
    });
    const actual = await ask(harness, 'cors.example.com', '/cors-wildcard-methods-headers-unauth', { headers: { origin: 'https://other.foo.com' } });
    expect(corsHeaders(actual)).to.deep.equal({ 'access-control-allow-origin': '*' });
  });
});
