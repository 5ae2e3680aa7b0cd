import { expect } from 'chai';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * HTTPRoutes routed end to end: a local-mode controller reads a
 * GatewayClass, a Gateway and HTTPRoutes from manifests, and real HTTP goes
 * through a real HAProxy to real backends, following the Gateway API's
 * conformance scenarios for path matching and precedence, header
 * modifiers, redirects and rewrites, 500 for backendRefs that do not
 * resolve; a new HTTPRoute to a served Service and a path change apply
 * without a reload.
 */

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What a backend saw of a request, and which backend it was. */
interface Seen {
  readonly backend: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

async function echoBackend(name: string): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // x-delay: milliseconds to wait before answering, for backend timeouts.
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ backend: name, url: req.url ?? '', headers: req.headers } satisfies Seen));
        },
        Number(req.headers['x-delay'] ?? 0),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

function ask(harness: LocalHarness, host: string, path: string, headers: Record<string, string> = {}, tls = false, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const common = { host: '127.0.0.1', method, path, headers: { host, ...headers }, agent: false as const };
    const done = (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    };
    const req = tls ? httpsRequest({ ...common, port: harness.ports.https, servername: host, rejectUnauthorized: false }, done) : request({ ...common, port: harness.ports.http }, done);
    req.on('error', reject);
    req.end();
  });
}

async function seen(harness: LocalHarness, host: string, path: string, headers: Record<string, string> = {}): Promise<Seen> {
  const answer = await ask(harness, host, path, headers);
  expect(answer.status, `${host}${path}: ${answer.body}`).to.equal(200);
  return JSON.parse(answer.body) as Seen;
}

/**
 * Waits for the deployment of a configuration rendered since `mark` that
 * lists `host` in host.map or host-suffix.map, and returns its render:
 * a case that waits for its own deployment leaves none behind to be taken
 * for the next case's.
 */
async function deployedWith(harness: LocalHarness, mark: number, host: string): Promise<Extract<Outcome, { type: 'rendered' }>> {
  const listed = (o: Outcome): o is Extract<Outcome, { type: 'rendered' }> =>
    o.type === 'rendered' && [o.files.maps['host.map'], o.files.maps['host-suffix.map']].some((map) => map?.split('\n').some((line) => line.startsWith(`${host} `)));
  return eventually(
    async () => {
      const since = harness.log.since(mark);
      return since.filter(listed).find((rendered) => since.some((o) => o.type === 'deployed' && o.hash === rendered.hash));
    },
    (rendered) => rendered !== undefined,
    `the deployment serving ${host}`,
    15_000,
  ) as Promise<Extract<Outcome, { type: 'rendered' }>>;
}

const GATEWAY = gateway(
  '{ name: http, port: 80, protocol: HTTP }',
  '{ name: https, port: 443, protocol: HTTPS, hostname: secure.example.com, tls: { mode: Terminate, certificateRefs: [ { name: secure-tls } ] } }',
);

/** An HTTPRoute on the Gateway for one hostname; `rules` in YAML, indented by four spaces. */
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

const to = (serviceName: string) => `backendRefs: [ { name: ${serviceName}, port: 80 } ]`;

/** Every request for canary.example.com split between echo-a and echo-b by weight. */
function canary(a: number, b: number): string {
  return httpRoute('canary', 'canary.example.com', `    - backendRefs: [ { name: echo-a, port: 80, weight: ${a} }, { name: echo-b, port: 80, weight: ${b} } ]\n`);
}

/** How many of `count` requests each backend answered, and how many were answered with a status other than 200, by status. */
async function shares(harness: LocalHarness, host: string, count: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const answer = await ask(harness, host, `/${i}`);
    const who = answer.status === 200 ? (JSON.parse(answer.body) as Seen).backend : String(answer.status);
    counts[who] = (counts[who] ?? 0) + 1;
  }
  return counts;
}

/** The ReferenceGrant letting HTTPRoutes of default use the Services of other. */
const GRANT = `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: { name: routes-from-default, namespace: other }
spec:
  from: [ { group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default } ]
  to: [ { group: "", kind: Service } ]
`;

const routes: Record<string, string> = {
  'paths.yaml': httpRoute(
    'paths',
    'paths.example.com',
    `    - { matches: [ { path: { type: PathPrefix, value: /exact } } ], ${to('echo-a')} }
    - { matches: [ { path: { type: Exact, value: /exact } } ], ${to('echo-b')} }
    - { matches: [ { path: { type: PathPrefix, value: /long } } ], ${to('echo-a')} }
    - { matches: [ { path: { type: PathPrefix, value: /long/longer } } ], ${to('echo-b')} }
    - { matches: [ { path: { type: RegularExpression, value: "/items/[0-9]+" } } ], ${to('echo-b')} }
`,
  ),
  'headers.yaml': httpRoute(
    'headers',
    'headers.example.com',
    `    - filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set: [ { name: X-Set, value: one } ]
            add: [ { name: X-Add, value: two } ]
            remove: [ X-Drop ]
        - type: ResponseHeaderModifier
          responseHeaderModifier:
            set: [ { name: X-Answer, value: three } ]
            remove: [ X-Backend-Secret ]
      ${to('echo-a')}
`,
  ),
  'redirect.yaml': httpRoute(
    'redirect',
    'redirect.example.com',
    `    - matches: [ { path: { type: PathPrefix, value: /secure } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { scheme: https, statusCode: 301 } } ]
    - matches: [ { path: { type: PathPrefix, value: /moved } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { hostname: elsewhere.example.com, port: 8443 } } ]
    - matches: [ { path: { type: PathPrefix, value: /original-prefix } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix } } } ]
    - matches: [ { path: { type: PathPrefix, value: /full } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { hostname: other.example.com, path: { type: ReplaceFullPath, replaceFullPath: /full-path-replacement } } } ]
`,
  ),
  // After the conformance scenarios HTTPRouteHeaderMatching, HTTPRouteQueryParamMatching and HTTPRouteMethodMatching.
  'matching.yaml': httpRoute(
    'matching',
    'match.example.com',
    `    - { matches: [ { headers: [ { name: version, value: one } ] } ], ${to('echo-a')} }
    - { matches: [ { headers: [ { name: version, value: two } ] } ], ${to('echo-b')} }
    - { matches: [ { headers: [ { name: version, value: two }, { name: color, value: orange } ] } ], ${to('echo-a')} }
    - { matches: [ { headers: [ { name: Color, value: blue } ] }, { headers: [ { name: color, value: green } ] } ], ${to('echo-a')} }
    - { matches: [ { headers: [ { name: color, type: RegularExpression, value: "^(red|yellow)$" } ] } ], ${to('echo-b')} }
    - { matches: [ { path: { type: PathPrefix, value: /q }, queryParams: [ { name: animal, value: whale } ] } ], ${to('echo-a')} }
    - { matches: [ { path: { type: PathPrefix, value: /q }, queryParams: [ { name: animal, value: dolphin } ] } ], ${to('echo-b')} }
    - { matches: [ { path: { type: PathPrefix, value: /q }, queryParams: [ { name: animal, value: dolphin }, { name: color, value: blue } ] } ], ${to('echo-a')} }
    - { matches: [ { path: { type: PathPrefix, value: /m }, method: POST } ], ${to('echo-a')} }
    - { matches: [ { path: { type: PathPrefix, value: /m }, method: GET } ], ${to('echo-b')} }
`,
  ),
  // After the conformance scenario HTTPRouteMatchingAcrossRoutes: the matches of two routes ranked together.
  'across-1.yaml': httpRoute(
    'across-1',
    'across.example.com',
    `    - { matches: [ { path: { type: PathPrefix, value: / } }, { path: { type: Exact, value: /example } } ], ${to('echo-a')} }
`,
  ),
  'across-2.yaml': httpRoute(
    'across-2',
    'across.example.com',
    `    - { matches: [ { path: { type: PathPrefix, value: /v2 }, headers: [ { name: version, value: two } ] }, { headers: [ { name: version, value: two } ] } ], ${to('echo-b')} }
`,
  ),
  'wildcard.yaml': httpRoute('wildcard', '"*.wild.example.com"', `    - { ${to('echo-b')} }\n`),
  'deeper-wildcard.yaml': httpRoute('deeper-wildcard', '"*.deep.wild.example.com"', `    - { ${to('echo-a')} }\n`),
  'canary.yaml': canary(3, 1),
  'secure.yaml': httpRoute('secure', 'secure.example.com', `    - { ${to('echo-a')} }\n`),
  'rewrite.yaml': httpRoute(
    'rewrite',
    'rewrite.example.com',
    `    - matches: [ { path: { type: PathPrefix, value: /app } } ]
      filters: [ { type: URLRewrite, urlRewrite: { hostname: inner.example.com, path: { type: ReplacePrefixMatch, replacePrefixMatch: /v2 } } } ]
      ${to('echo-a')}
    - matches: [ { path: { type: PathPrefix, value: /strip } } ]
      filters: [ { type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: / } } } ]
      ${to('echo-a')}
`,
  ),
};

describe('Gateway API routing end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echoA: Server;
  let echoB: Server;

  before(async () => {
    echoA = await echoBackend('a');
    echoB = await echoBackend('b');
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    const mark = harness.mark();
    await harness.write(
      'services.yaml',
      docs(
        GATEWAY,
        tlsSecret('secure-tls', LEAF_CERT, LEAF_KEY),
        service('echo-a', [{ port: 80, targetPort: portOf(echoA) }]),
        slice('echo-a-1', 'echo-a', undefined, portOf(echoA)),
        service('echo-b', [{ port: 80, targetPort: portOf(echoB) }]),
        slice('echo-b-1', 'echo-b', undefined, portOf(echoB)),
        service('echo-c', [{ port: 80, targetPort: portOf(echoB) }], 'other'),
        slice('echo-c-1', 'echo-c', undefined, portOf(echoB), true, { namespace: 'other' }),
      ),
    );
    for (const [file, text] of Object.entries(routes)) await harness.write(file, text);
    // Every file's routes, whatever order the watcher saw the files in: no deployment is left to come.
    const probes: readonly [string, string, Record<string, string>][] = [
      ['paths.example.com', '/exact', {}],
      ['headers.example.com', '/', {}],
      ['redirect.example.com', '/secure', {}],
      ['match.example.com', '/', { version: 'one' }],
      ['across.example.com', '/v2', { version: 'two' }],
      ['across.example.com', '/', {}],
      ['x.wild.example.com', '/', {}],
      ['x.deep.wild.example.com', '/', {}],
      ['canary.example.com', '/', {}],
      ['secure.example.com', '/', {}],
      ['rewrite.example.com', '/strip', {}],
    ];
    await eventually(
      () => Promise.all(probes.map(([host, path, headers]) => ask(harness, host, path, headers))),
      (answers) => answers.every((answer) => answer.status !== 404 && answer.status !== 503),
      'the routes to be served',
      15_000,
    );
    const rendered = harness.log.since(mark).filter((o): o is Extract<Outcome, { type: 'rendered' }> => o.type === 'rendered');
    expect(rendered.at(-1)!.excluded).to.deep.equal([]);
    expect(rendered.at(-1)!.warnings).to.deep.equal([]);
  });

  after(async () => {
    await harness?.stop();
    echoA?.closeAllConnections();
    echoB?.closeAllConnections();
    await Promise.all([echoA, echoB].map((server) => server && new Promise((resolve) => server.close(resolve))));
  });

  it('prefers an Exact match over a prefix, the longest prefix over shorter ones, matches prefixes element by element and regular expressions whole', async () => {
    expect((await seen(harness, 'paths.example.com', '/exact')).backend).to.equal('b');
    expect((await seen(harness, 'paths.example.com', '/exact/')).backend).to.equal('a');
    expect((await seen(harness, 'paths.example.com', '/exact/x')).backend).to.equal('a');
    expect((await seen(harness, 'paths.example.com', '/long/x')).backend).to.equal('a');
    expect((await seen(harness, 'paths.example.com', '/long/longer')).backend).to.equal('b');
    expect((await seen(harness, 'paths.example.com', '/long/longer/x')).backend).to.equal('b');
    expect((await seen(harness, 'paths.example.com', '/long/longerer')).backend).to.equal('a');
    expect((await ask(harness, 'paths.example.com', '/longer')).status).to.equal(404);
    // A RegularExpression path matches the whole path, case-sensitive.
    expect((await seen(harness, 'paths.example.com', '/items/42?q=1')).backend).to.equal('b');
    expect((await ask(harness, 'paths.example.com', '/items/42/x')).status).to.equal(404);
    expect((await ask(harness, 'paths.example.com', '/ITEMS/42')).status).to.equal(404);
    expect((await ask(harness, 'other.example.com', '/exact')).status).to.equal(404);
  });

  it('matches headers exactly (names in any case) or by regular expression, the most header matches first', async () => {
    const backend = async (headers: Record<string, string>) => {
      const answer = await ask(harness, 'match.example.com', '/', headers);
      return answer.status === 200 ? (JSON.parse(answer.body) as Seen).backend : answer.status;
    };
    expect(await backend({ version: 'one' })).to.equal('a');
    expect(await backend({ version: 'two' })).to.equal('b');
    expect(await backend({ version: 'two', color: 'orange' })).to.equal('a');
    expect(await backend({ version: 'one', color: 'orange' })).to.equal('a');
    expect(await backend({ COLOR: 'blue' })).to.equal('a');
    expect(await backend({ color: 'green' })).to.equal('a');
    expect(await backend({ color: 'red' })).to.equal('b');
    expect(await backend({ color: 'yellow' })).to.equal('b');
    expect(await backend({ color: 'purple' })).to.equal(404);
    expect(await backend({ version: 'three' })).to.equal(404);
    expect(await backend({ version: 'ONE' })).to.equal(404);
    expect(await backend({})).to.equal(404);
  });

  it('matches query parameters by name and whole value, case-sensitive, the most query matches first', async () => {
    expect((await seen(harness, 'match.example.com', '/q?animal=whale')).backend).to.equal('a');
    expect((await seen(harness, 'match.example.com', '/q?animal=dolphin')).backend).to.equal('b');
    expect((await seen(harness, 'match.example.com', '/q?animal=dolphin&color=blue')).backend).to.equal('a');
    expect((await seen(harness, 'match.example.com', '/q?color=blue&animal=dolphin')).backend).to.equal('a');
    expect((await ask(harness, 'match.example.com', '/q?ANIMAL=Whale')).status).to.equal(404);
    expect((await ask(harness, 'match.example.com', '/q?animal=whalesong')).status).to.equal(404);
  });

  it('matches the method', async () => {
    const post = await ask(harness, 'match.example.com', '/m', {}, false, 'POST');
    expect([post.status, (JSON.parse(post.body) as Seen).backend]).to.deep.equal([200, 'a']);
    expect((await seen(harness, 'match.example.com', '/m/x')).backend).to.equal('b');
    expect((await ask(harness, 'match.example.com', '/m', {}, false, 'PUT')).status).to.equal(404);
  });

  it('ranks the matches of several routes for one host together: Exact path, longest prefix, then header matches', async () => {
    expect((await seen(harness, 'across.example.com', '/')).backend).to.equal('a');
    expect((await seen(harness, 'across.example.com', '/example')).backend).to.equal('a');
    expect((await seen(harness, 'across.example.com', '/v2')).backend).to.equal('a');
    expect((await seen(harness, 'across.example.com', '/v2/x', { version: 'two' })).backend).to.equal('b');
    expect((await seen(harness, 'across.example.com', '/', { version: 'two' })).backend).to.equal('b');
    expect((await seen(harness, 'across.example.com', '/other', { version: 'two' })).backend).to.equal('b');
    // An Exact path outranks a prefix with header matches.
    expect((await seen(harness, 'across.example.com', '/example', { version: 'two' })).backend).to.equal('a');
  });

  it('serves a route with conditions some served route has without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('again.yaml', httpRoute('again', 'again.example.com', `    - { matches: [ { headers: [ { name: version, value: one } ] } ], ${to('echo-b')} }\n`));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode, JSON.stringify(deployed.result)).to.equal('runtime');
    expect((await seen(harness, 'again.example.com', '/', { version: 'one' })).backend).to.equal('b');
    expect((await ask(harness, 'again.example.com', '/')).status).to.equal(404);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('serves a wildcard hostname for names any number of labels below its domain, the nearest wildcard first, not for the domain itself', async () => {
    expect((await seen(harness, 'one.wild.example.com', '/')).backend).to.equal('b');
    expect((await seen(harness, 'a.b.c.wild.example.com', '/')).backend).to.equal('b');
    expect((await seen(harness, 'a.b.c.d.e.f.wild.example.com', '/')).backend).to.equal('b');
    expect((await seen(harness, 'a.b.c.d.e.f.g.h.i.j.k.l.wild.example.com', '/')).backend).to.equal('b');
    expect((await ask(harness, 'wild.example.com', '/')).status).to.equal(404);
    // *.deep.wild.example.com is nearer than *.wild.example.com for every name below it, however deep.
    expect((await seen(harness, 'x.deep.wild.example.com', '/')).backend).to.equal('a');
    expect((await seen(harness, 'a.b.c.d.e.f.g.h.i.deep.wild.example.com', '/')).backend).to.equal('a');
    expect((await seen(harness, 'deep.wild.example.com', '/')).backend).to.equal('b');
  });

  it('serves a new wildcard hostname whose domain has as many labels as a served one without a reload, at any depth', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('more-wildcard.yaml', httpRoute('more-wildcard', '"*.more.example.com"', `    - { ${to('echo-a')} }\n`));
    await deployedWith(harness, mark, '*.more.example.com');
    expect((await seen(harness, 'a.b.c.d.e.f.g.h.more.example.com', '/')).backend).to.equal('a');
    expect((await ask(harness, 'more.example.com', '/')).status).to.equal(404);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it("terminates TLS for an HTTPS listener's hostname with its certificateRefs' Secret, and refuses other names", async () => {
    const secure = await ask(harness, 'secure.example.com', '/in', {}, true);
    expect(secure.status).to.equal(200);
    expect((JSON.parse(secure.body) as Seen).url).to.equal('/in');
    // strict-sni: a name no certificate lists gets no handshake.
    expect(await harness.handshake('paths.example.com')).to.match(/^refused/);
  });

  it('sets, adds and removes request headers the backend sees, and response headers the client sees', async () => {
    const answer = await ask(harness, 'headers.example.com', '/', { 'X-Set': 'before', 'X-Add': 'first', 'X-Drop': 'gone' });
    expect(answer.status).to.equal(200);
    const backend = JSON.parse(answer.body) as Seen;
    expect(backend.headers['x-set']).to.equal('one');
    expect(backend.headers['x-add']).to.equal('first, two');
    expect(backend.headers['x-drop']).to.equal(undefined);
    expect(answer.headers['x-answer']).to.equal('three');
  });

  it('answers a RequestRedirect with its status and Location, keeping what it does not replace', async () => {
    const secure = await ask(harness, 'redirect.example.com', '/secure/a?b=1');
    expect([secure.status, secure.headers.location]).to.deep.equal([301, 'https://redirect.example.com/secure/a?b=1']);
    const moved = await ask(harness, 'redirect.example.com', '/moved/x');
    expect([moved.status, moved.headers.location]).to.deep.equal([302, 'http://elsewhere.example.com:8443/moved/x']);
  });

  it('answers a RequestRedirect with a path: the matched prefix or the whole path replaced, the query kept (conformance HTTPRouteRedirectPath)', async () => {
    const location = async (path: string) => {
      const answer = await ask(harness, 'redirect.example.com', path);
      return `${answer.status} ${answer.headers.location}`;
    };
    expect(await location('/original-prefix/lemon')).to.equal('302 http://redirect.example.com/replacement-prefix/lemon');
    expect(await location('/original-prefix')).to.equal('302 http://redirect.example.com/replacement-prefix');
    expect(await location('/original-prefix/a?b=1')).to.equal('302 http://redirect.example.com/replacement-prefix/a?b=1');
    expect(await location('/full/path/original')).to.equal('302 http://other.example.com/full-path-replacement');
    expect(await location('/full')).to.equal('302 http://other.example.com/full-path-replacement');
  });

  it('replaces the matched prefix and the Host the backend sees with URLRewrite', async () => {
    const rewritten = await seen(harness, 'rewrite.example.com', '/app/x?y=1');
    expect([rewritten.url, rewritten.headers.host]).to.deep.equal(['/v2/x?y=1', 'inner.example.com']);
    expect((await seen(harness, 'rewrite.example.com', '/app')).url).to.equal('/v2');
    expect((await seen(harness, 'rewrite.example.com', '/strip/deep/er')).url).to.equal('/deep/er');
    expect((await seen(harness, 'rewrite.example.com', '/strip')).url).to.equal('/');
  });

  it('splits 1,000 requests by backendRef weight within 10%, and changes the split without a reload', async () => {
    const first = await shares(harness, 'canary.example.com', 1000);
    expect(first['a']).to.be.within(675, 825);
    expect(first['b']).to.be.within(225, 275);
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('canary.yaml', canary(1, 4));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    const second = await shares(harness, 'canary.example.com', 1000);
    expect(second['a']).to.be.within(180, 220);
    expect(second['b']).to.be.within(720, 880);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('answers 500 for a backendRef to another namespace until a ReferenceGrant there allows it, and for one to a missing Service', async () => {
    let mark = harness.mark();
    await harness.write('cross.yaml', httpRoute('cross', 'cross.example.com', `    - backendRefs: [ { name: echo-c, namespace: other, port: 80 } ]\n`));
    await harness.next(mark, 'deployed');
    const refused = await ask(harness, 'cross.example.com', '/x');
    expect([refused.status, refused.body]).to.deep.equal([500, '500 Internal Server Error: no backend of the route can take this request.']);
    const rendered = harness.log.since(mark).filter((o): o is Extract<Outcome, { type: 'rendered' }> => o.type === 'rendered');
    expect(rendered.at(-1)!.warnings.map((problem) => problem.message)).to.deep.equal([
      'for host cross.example.com, the share of its backendRef to other/echo-c is answered 500: spec.rules[0].backendRefs[0]: Service other/echo-c is in another namespace, and no ReferenceGrant there allows HTTPRoutes of default to use it',
    ]);
    // A second route answered 500 shares the first one's policy: map lines only.
    const reloads = await harness.reloads();
    mark = harness.mark();
    await harness.write('ghost.yaml', httpRoute('ghost', 'ghost.example.com', `    - ${to('ghost')}\n`));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    expect((await ask(harness, 'ghost.example.com', '/')).status).to.equal(500);
    expect(await harness.reloads()).to.equal(reloads);
    await harness.write('grant.yaml', GRANT);
    const allowed = await eventually(
      () => ask(harness, 'cross.example.com', '/x'),
      (answer) => answer.status === 200,
      'the granted backendRef to be served',
      15_000,
    );
    expect((JSON.parse(allowed.body) as Seen).url).to.equal('/x');
    expect((await ask(harness, 'ghost.example.com', '/')).status).to.equal(500);
  });

  it('answers 500 for a rule whose backendRefs all have weight 0, and serves a second one without a reload', async () => {
    const zero = (name: string) => httpRoute(name, `${name}.example.com`, `    - backendRefs: [ { name: echo-a, port: 80, weight: 0 }, { name: echo-b, port: 80, weight: 0 } ]\n`);
    const mark = harness.mark();
    await harness.write('zero-1.yaml', zero('zero-1'));
    const rendered = await deployedWith(harness, mark, 'zero-1.example.com');
    const answer = await ask(harness, 'zero-1.example.com', '/');
    expect([answer.status, answer.body]).to.deep.equal([500, '500 Internal Server Error: no backend of the route can take this request.']);
    expect(rendered.warnings.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`)).to.include(
      'HTTPRoute default/zero-1 spec.rules[0].matches[0]: for host zero-1.example.com, every request is answered 500: its backendRefs all have weight 0',
    );
    // The second one shares the first one's policy: map lines only.
    const reloads = await harness.reloads();
    const again = harness.mark();
    await harness.write('zero-2.yaml', zero('zero-2'));
    await deployedWith(harness, again, 'zero-2.example.com');
    expect((await ask(harness, 'zero-2.example.com', '/')).status).to.equal(500);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('serves the first of two matches with the same host, path and conditions, and warns that the other is never reached', async () => {
    const same = `{ matches: [ { path: { type: PathPrefix, value: /p }, headers: [ { name: env, value: twin } ] } ]`;
    const mark = harness.mark();
    await harness.write('twin.yaml', httpRoute('twin', 'twin.example.com', `    - ${same}, ${to('echo-a')} }\n    - ${same}, ${to('echo-b')} }\n`));
    const rendered = await deployedWith(harness, mark, 'twin.example.com');
    for (let i = 0; i < 5; i++) expect((await seen(harness, 'twin.example.com', `/p/${i}`, { env: 'twin' })).backend).to.equal('a');
    expect((await ask(harness, 'twin.example.com', '/p')).status).to.equal(404);
    const warnings = rendered.warnings.filter((problem) => problem.object === 'HTTPRoute default/twin');
    expect(warnings.map((problem) => `${problem.field}: ${problem.message}`)).to.deep.equal([
      'spec.rules[1].matches[0]: route "twin.example.com/p" not served here: the earlier spec.rules[0].matches[0], with the same header, query parameter and method matches, sends it to backend default_echo-a_80',
      'spec.rules[1].matches[0]: route "twin.example.com/p/" not served here: the earlier spec.rules[0].matches[0], with the same header, query parameter and method matches, sends it to backend default_echo-a_80',
    ]);
  });

  it("answers 500 for an unresolved backendRef's share of a split, within 10% over 1,000 requests", async () => {
    await harness.write('half.yaml', httpRoute('half', 'half.example.com', `    - backendRefs: [ { name: echo-a, port: 80, weight: 3 }, { name: ghost, port: 80, weight: 1 } ]\n`));
    await eventually(
      () => ask(harness, 'half.example.com', '/'),
      (answer) => answer.status !== 404,
      'the split to be served',
      15_000,
    );
    const counts = await shares(harness, 'half.example.com', 1000);
    expect(Object.keys(counts).sort()).to.deep.equal(['500', 'a']);
    expect(counts['a']).to.be.within(675, 825);
    expect(counts['500']).to.be.within(225, 275);
  });

  it("answers 504 when a backend takes longer than the rule's timeouts.backendRequest, for that rule alone", async () => {
    await harness.write(
      'timeout.yaml',
      httpRoute('timeout', 'timeout.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /slow } } ], timeouts: { backendRequest: 300ms }, ${to('echo-a')} }\n`),
    );
    await eventually(
      () => ask(harness, 'timeout.example.com', '/slow'),
      (answer) => answer.status === 200,
      'the route with a timeout to be served',
      15_000,
    );
    expect((await ask(harness, 'timeout.example.com', '/slow', { 'x-delay': '1500' })).status).to.equal(504);
    expect((await ask(harness, 'timeout.example.com', '/slow', { 'x-delay': '50' })).status).to.equal(200);
    // The backend is shared: a route without the timeout waits as long as the backend's own.
    expect((await ask(harness, 'headers.example.com', '/', { 'x-delay': '1500' })).status).to.equal(200);
  });

  it("serves header and method conditions on RegularExpression paths in the specification's order, falling through to the next expression and to prefixes", async () => {
    const regex = (value: string, extra: string, serviceName: string) => `    - { matches: [ { path: { type: RegularExpression, value: "${value}" }${extra} } ], ${to(serviceName)} }\n`;
    const version = (value: string) => `, headers: [ { name: version, value: ${value} } ]`;
    const mark = harness.mark();
    await harness.write(
      'regex-conditions.yaml',
      httpRoute(
        'regex-conditions',
        'regexcond.example.com',
        regex('/v[0-9]+/long', ', method: POST', 'echo-b') +
          regex('/v[0-9]+/.*', '', 'echo-a') +
          regex('/v[0-9]+', version('two'), 'echo-b') +
          regex('/v[0-9]+', '', 'echo-a') +
          regex('/p/[0-9]+', version('two'), 'echo-a') +
          `    - { matches: [ { path: { type: PathPrefix, value: /p } } ], ${to('echo-b')} }\n`,
      ),
    );
    await deployedWith(harness, mark, 'regexcond.example.com');
    const backend = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
      const answer = await ask(harness, 'regexcond.example.com', path, headers, false, method);
      return answer.status === 200 ? (JSON.parse(answer.body) as Seen).backend : String(answer.status);
    };
    // The method match of the longer expression, else the next expression that matches.
    expect([await backend('/v1/long', {}, 'POST'), await backend('/v1/long'), await backend('/v1/other', {}, 'POST')]).to.deep.equal(['b', 'a', 'a']);
    // The header match before the same expression without conditions.
    expect([await backend('/v12', { version: 'two' }), await backend('/v12'), await backend('/v12', { version: 'three' })]).to.deep.equal(['b', 'a', 'a']);
    // An expression whose conditions fail lets the prefix lookup run.
    expect([await backend('/p/7', { version: 'two' }), await backend('/p/7'), await backend('/p/x', { version: 'two' })]).to.deep.equal(['a', 'b', 'b']);
    // Another route with conditions a served regex line has (a shorter expression: its line goes last): map lines only.
    const reloads = await harness.reloads();
    const again = harness.mark();
    await harness.write('regex-again.yaml', httpRoute('regex-again', 'rx.example.com', regex('/[0-9]', version('two'), 'echo-b')));
    await deployedWith(harness, again, 'rx.example.com');
    expect((await seen(harness, 'rx.example.com', '/5', { version: 'two' })).backend).to.equal('b');
    expect((await ask(harness, 'rx.example.com', '/5')).status).to.equal(404);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('serves a new HTTPRoute to a served Service, then a changed path, without a reload', async () => {
    const reloads = await harness.reloads();
    let mark = harness.mark();
    await harness.write('new.yaml', httpRoute('new', 'new.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /one } } ], ${to('echo-b')} }\n`));
    let deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    expect((await seen(harness, 'new.example.com', '/one/x')).backend).to.equal('b');
    mark = harness.mark();
    await harness.write('new.yaml', httpRoute('new', 'new.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /two } } ], ${to('echo-b')} }\n`));
    deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    expect((await seen(harness, 'new.example.com', '/two')).backend).to.equal('b');
    expect((await ask(harness, 'new.example.com', '/one/x')).status).to.equal(404);
    expect(await harness.reloads()).to.equal(reloads);
  });
});
