import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, ingress, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { Mirror } from '../support/mirror-backend.ts';
import { WILDCARD_CERT, WILDCARD_KEY } from '../support/tls-refused-fixture.ts';

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

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** A RequestMirror filter to a Service's port 80, of `percent` of the requests when given. */
const mirrorTo = (serviceName: string, percent?: number) =>
  `filters: [ { type: RequestMirror, requestMirror: { backendRef: { name: ${serviceName}, port: 80 }${percent === undefined ? '' : `, percent: ${percent}`} } } ]`;

function ask(harness: LocalHarness, host: string, path: string, headers: Record<string, string> = {}, tls = false, method = 'GET', content?: string): Promise<Answer> {
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
    req.end(content);
  });
}

/** The backend that answered, or the status when it was not 200. */
async function backendOf(answer: Promise<Answer>): Promise<string> {
  const { status, body } = await answer;
  return status === 200 ? (JSON.parse(body) as Seen).backend : String(status);
}

async function seen(harness: LocalHarness, host: string, path: string, headers: Record<string, string> = {}): Promise<Seen> {
  const answer = await ask(harness, host, path, headers);
  expect(answer.status, `${host}${path}: ${answer.body}`).to.equal(200);
  return JSON.parse(answer.body) as Seen;
}

type Rendered = Extract<Outcome, { type: 'rendered' }>;
type Deployed = Extract<Outcome, { type: 'deployed' }>;

/**
 * Waits for the deployment of a configuration rendered since `mark` that
 * `accept` takes, and returns it with its render. Not the next deployment:
 * a manifest written in place is empty for a moment, and a read in between
 * (the folder settles 50 ms, a loaded machine can take longer between the
 * truncation and the write) deploys it without its objects first.
 */
async function deploymentWhere(harness: LocalHarness, mark: number, accept: (rendered: Rendered) => boolean, what: string): Promise<{ rendered: Rendered; deployed: Deployed }> {
  const found = await eventually(
    async () => {
      const since = harness.log.since(mark);
      for (const rendered of since.filter((o): o is Rendered => o.type === 'rendered' && accept(o))) {
        const deployed = since.find((o): o is Deployed => o.type === 'deployed' && o.hash === rendered.hash);
        if (deployed !== undefined) return { rendered, deployed };
      }
      return undefined;
    },
    (pair) => pair !== undefined,
    what,
    15_000,
  );
  return found!;
}

/** True when a map of `rendered` has a line for `key` (a host, or a host and path). */
const mapsList = (rendered: Rendered, maps: readonly string[], key: string): boolean => maps.some((map) => rendered.files.maps[map]?.split('\n').some((line) => line.startsWith(`${key} `)));

/**
 * Waits for the deployment of a configuration rendered since `mark` that
 * lists `host` in host.map or host-suffix.map, and returns its render:
 * a case that waits for its own deployment leaves none behind to be taken
 * for the next case's.
 */
async function deployedWith(harness: LocalHarness, mark: number, host: string): Promise<Rendered> {
  return (await deploymentWhere(harness, mark, (rendered) => mapsList(rendered, ['host.map', 'host-suffix.map'], host), `the deployment serving ${host}`)).rendered;
}

const GATEWAY = gateway(
  '{ name: http, port: 80, protocol: HTTP }',
  '{ name: https, port: 443, protocol: HTTPS, hostname: secure.example.com, tls: { mode: Terminate, certificateRefs: [ { name: secure-tls } ] } }',
  '{ name: https-api, port: 443, protocol: HTTPS, hostname: api.example.com, tls: { mode: Terminate, certificateRefs: [ { name: secure-tls } ] } }',
);

/** An HTTPRoute on the Gateway (or the listeners `parentRef` selects) for one hostname; `rules` in YAML, indented by four spaces. */
function httpRoute(name: string, hostname: string, rules: string, parentRef = '{ name: gw }'): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ ${parentRef} ]
  hostnames: [ ${hostname} ]
  rules:
${rules}`;
}

const to = (serviceName: string) => `backendRefs: [ { name: ${serviceName}, port: 80 } ]`;

/** Every request for canary.example.com split between echo-a and echo-b by weight. */
function canary(a: number, b: number): string {
  return httpRoute('canary', 'canary.example.com', `    - backendRefs: [ { name: echo-a, port: 80, weight: ${a} }, { name: echo-b, port: 80, weight: ${b} } ]\n`);
}

/**
 * /app on filtered.example.com split between echo-a and echo-b by weight,
 * the rule setting X-Rule on both and echo-a's backendRef filters acting on
 * its share alone: a request header, a response header, the Host and the
 * matched prefix.
 */
function filtered(a: number, b: number): string {
  return httpRoute(
    'filtered',
    'filtered.example.com',
    `    - matches: [ { path: { type: PathPrefix, value: /app } } ]
      filters: [ { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: X-Rule, value: rule } ] } } ]
      backendRefs:
        - name: echo-a
          port: 80
          weight: ${a}
          filters:
            - { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: X-Ref, value: a } ], remove: [ X-Rule ] } }
            - { type: ResponseHeaderModifier, responseHeaderModifier: { add: [ { name: X-Ref-Answer, value: a } ] } }
            - { type: URLRewrite, urlRewrite: { hostname: a.internal, path: { type: ReplacePrefixMatch, replacePrefixMatch: /v2 } } }
        - { name: echo-b, port: 80, weight: ${b} }
`,
  );
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

/**
 * A route split 3:1 between echo-a and echo-b holds within 10% over 1,000
 * requests (`count`); rewritten to 1:4, a runtime change without a reload,
 * it holds the new weights as well.
 */
async function splitsThenChanges(harness: LocalHarness, file: string, changed: string, count: () => Promise<Record<string, number>>): Promise<void> {
  const first = await count();
  expect(first['a']).to.be.within(675, 825);
  expect(first['b']).to.be.within(225, 275);
  const reloads = await harness.reloads();
  const mark = harness.mark();
  await harness.write(file, changed);
  const deployed = await harness.next(mark, 'deployed');
  expect(deployed.result.mode).to.equal('runtime');
  const second = await count();
  expect(second['a']).to.be.within(180, 220);
  expect(second['b']).to.be.within(720, 880);
  expect(await harness.reloads()).to.equal(reloads);
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
  'filtered.yaml': filtered(3, 1),
  // After the conformance scenarios HTTPRouteBackendURLRewrite, HTTPRouteBackendRequestRedirect and HTTPRouteRequestHeaderModifierBackendWeights.
  'backend-filters.yaml': httpRoute(
    'backend-filters',
    'backend-filters.example.com',
    `    - matches: [ { path: { type: PathPrefix, value: /full } } ]
      backendRefs: [ { name: echo-a, port: 80, filters: [ { type: URLRewrite, urlRewrite: { path: { type: ReplaceFullPath, replaceFullPath: /rewritten-full } } } ] } ]
    - matches: [ { path: { type: PathPrefix, value: /prefix } } ]
      backendRefs: [ { name: echo-a, port: 80, filters: [ { type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /rewritten-prefix } } } ] } ]
    - matches: [ { path: { type: PathPrefix, value: /redirect-full } } ]
      backendRefs: [ { name: echo-a, port: 80, filters: [ { type: RequestRedirect, requestRedirect: { path: { type: ReplaceFullPath, replaceFullPath: /redirected-full } } } ] } ]
    - matches: [ { path: { type: PathPrefix, value: /redirect-prefix } } ]
      backendRefs: [ { name: echo-a, port: 80, filters: [ { type: RequestRedirect, requestRedirect: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /redirected-prefix } } } ] } ]
    - matches: [ { path: { type: PathPrefix, value: / } }, { headers: [ { name: version, value: two } ] } ]
      backendRefs:
        - { name: echo-a, port: 80, weight: 10, filters: [ { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: Backend, value: a } ] } } ] }
        - { name: echo-b, port: 80, weight: 10, filters: [ { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: Backend, value: b } ] } } ] }
`,
  ),
  'secure.yaml': httpRoute('secure', 'secure.example.com', `    - { ${to('echo-a')} }\n`),
  // Routes on one listener of the Gateway: by sectionName, or by port. The HTTP-to-HTTPS redirect of the
  // Gateway API's guides: /pair answered with a redirect on the HTTP listener, by a backend on the HTTPS one.
  'listeners.yaml': docs(
    httpRoute('tls-only', 'secure.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /pair } } ], ${to('echo-b')} }\n`, '{ name: gw, sectionName: https }'),
    httpRoute(
      'upgrade',
      'secure.example.com',
      `    - matches: [ { path: { type: PathPrefix, value: /pair } } ]
      filters: [ { type: RequestRedirect, requestRedirect: { scheme: https, statusCode: 301 } } ]
`,
      '{ name: gw, sectionName: http }',
    ),
    httpRoute(
      'plain-only',
      'secure.example.com',
      `    - { matches: [ { path: { type: PathPrefix, value: /only-plain } }, { path: { type: RegularExpression, value: "/re/[0-9]+" } } ], ${to('echo-b')} }\n`,
      '{ name: gw, sectionName: http }',
    ),
    httpRoute('by-port', 'secure.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /by-port } } ], ${to('echo-b')} }\n`, '{ name: gw, port: 443 }'),
  ),
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
      ['filtered.example.com', '/app', {}],
      ['backend-filters.example.com', '/full', {}],
      ['secure.example.com', '/', {}],
      ['secure.example.com', '/pair', {}],
      ['secure.example.com', '/only-plain', {}],
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
    // Cases below mark outcomes: the routes' deployment must be reported first.
    await harness.settled();
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

  it('serves a route on the listeners it attached to alone: by sectionName or port, the next match answering elsewhere', async () => {
    // One path, one route per listener: a redirect over plain HTTP, the backend over HTTPS.
    const upgrade = await ask(harness, 'secure.example.com', '/pair/a?b=1');
    expect([upgrade.status, upgrade.headers.location]).to.deep.equal([301, 'https://secure.example.com/pair/a?b=1']);
    expect(await backendOf(ask(harness, 'secure.example.com', '/pair/a', {}, true))).to.equal('b');
    // On the HTTP listener alone: over HTTPS the route of both listeners for / answers.
    expect(await backendOf(ask(harness, 'secure.example.com', '/only-plain/x'))).to.equal('b');
    expect(await backendOf(ask(harness, 'secure.example.com', '/only-plain/x', {}, true))).to.equal('a');
    // A regular expression path has no next match to go on to (map_reg): over HTTPS, as if no route matched.
    expect(await backendOf(ask(harness, 'secure.example.com', '/re/12'))).to.equal('b');
    expect(await backendOf(ask(harness, 'secure.example.com', '/re/12', {}, true))).to.equal('404');
    // parentRef port 443: the HTTPS listener alone.
    expect(await backendOf(ask(harness, 'secure.example.com', '/by-port', {}, true))).to.equal('b');
    expect(await backendOf(ask(harness, 'secure.example.com', '/by-port'))).to.equal('a');
  });

  it('serves a route on an HTTPS listener alone over HTTPS, 404 over plain HTTP, and a new one there without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('tls-new.yaml', httpRoute('tls-new', 'api.example.com', `    - { ${to('echo-b')} }\n`, '{ name: gw, sectionName: https-api }'));
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode, JSON.stringify(deployed.result)).to.equal('runtime');
    expect(await backendOf(ask(harness, 'api.example.com', '/x', {}, true))).to.equal('b');
    expect(await backendOf(ask(harness, 'api.example.com', '/x'))).to.equal('404');
    expect(await harness.reloads()).to.equal(reloads);
  });

  it("never lets an HTTPS listener's wildcard certificate answer for a host an Ingress namespace holds", async () => {
    const mark = harness.mark();
    await harness.write(
      'wild-tls.yaml',
      docs(
        `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: wild-gw, namespace: default }
spec:
  gatewayClassName: haproxy
  listeners:
    - { name: https, port: 443, protocol: HTTPS, hostname: "*.tls.example.com", tls: { certificateRefs: [ { name: wild-tls } ] } }
`,
        tlsSecret('wild-tls', WILDCARD_CERT, WILDCARD_KEY),
        httpRoute('tls-app', 'app.tls.example.com', `    - { ${to('echo-b')} }\n`, '{ name: wild-gw }'),
        ingress('taken', 'taken.tls.example.com', [['/', 'Prefix', 'echo-a', { number: 80 }]]),
      ),
    );
    await harness.next(mark, 'deployed');
    await harness.untilHandshake('app.tls.example.com', fingerprint(WILDCARD_CERT));
    expect(await backendOf(ask(harness, 'app.tls.example.com', '/', {}, true))).to.equal('b');
    // The Ingress's host, without a certificate of its own: no handshake, never the Gateway's certificate.
    expect(await backendOf(ask(harness, 'taken.tls.example.com', '/'))).to.equal('a');
    expect(await harness.handshake('taken.tls.example.com')).to.match(/^refused/);
    // A name nobody holds: the listener's wildcard answers.
    expect(await harness.handshake('other.tls.example.com')).to.equal(fingerprint(WILDCARD_CERT));
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
    await splitsThenChanges(harness, 'canary.yaml', canary(1, 4), () => shares(harness, 'canary.example.com', 1000));
  });

  it("applies a backendRef's own filters to its share of a split alone, splits 1,000 requests within 10%, and changes the weights without a reload", async () => {
    /** Per backend, how many of 1,000 requests it answered, each checked for what its filters did and did not do. */
    const split = async () => {
      const counts: Record<string, number> = {};
      for (let i = 0; i < 1000; i++) {
        const answer = await ask(harness, 'filtered.example.com', `/app/${i}?q=1`, { 'X-Ref': 'client' });
        expect(answer.status, answer.body).to.equal(200);
        const got = JSON.parse(answer.body) as Seen;
        const what = [got.url, got.headers.host, got.headers['x-ref'], got.headers['x-rule'], answer.headers['x-ref-answer']];
        if (got.backend === 'a') expect(what).to.deep.equal([`/v2/${i}?q=1`, 'a.internal', 'a', undefined, 'a']);
        else expect(what).to.deep.equal([`/app/${i}?q=1`, 'filtered.example.com', 'client', 'rule', undefined]);
        counts[got.backend] = (counts[got.backend] ?? 0) + 1;
      }
      return counts;
    };
    await splitsThenChanges(harness, 'filtered.yaml', filtered(1, 4), split);
  });

  it("serves a backendRef's URLRewrite, RequestRedirect and RequestHeaderModifier (conformance HTTPRouteBackendURLRewrite, HTTPRouteBackendRequestRedirect, HTTPRouteRequestHeaderModifierBackendWeights)", async () => {
    expect((await seen(harness, 'backend-filters.example.com', '/full/original')).url).to.equal('/rewritten-full');
    expect((await seen(harness, 'backend-filters.example.com', '/prefix/original')).url).to.equal('/rewritten-prefix/original');
    const location = async (path: string) => {
      const answer = await ask(harness, 'backend-filters.example.com', path);
      return `${answer.status} ${answer.headers.location}`;
    };
    expect(await location('/redirect-full/original')).to.equal('302 http://backend-filters.example.com/redirected-full');
    expect(await location('/redirect-prefix/original')).to.equal('302 http://backend-filters.example.com/redirected-prefix/original');
    // Each backendRef's header names it on its requests alone, the split even, through a path line and through a candidate list (a header match).
    const lookups: readonly Record<string, string>[] = [{}, { version: 'two' }];
    for (const headers of lookups) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => seen(harness, 'backend-filters.example.com', '/', headers)));
      for (const answer of answers) expect(answer.headers['backend']).to.equal(answer.backend);
      expect(answers.filter((answer) => answer.backend === 'a')).to.have.length(10);
    }
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

  it("answers 500 for an unresolved backendRef's share of a split, within 4.5 standard deviations over 1,000 requests", async () => {
    await harness.write('half.yaml', httpRoute('half', 'half.example.com', `    - backendRefs: [ { name: echo-a, port: 80, weight: 3 }, { name: ghost, port: 80, weight: 1 } ]\n`));
    await eventually(
      () => ask(harness, 'half.example.com', '/'),
      (answer) => answer.status !== 404,
      'the split to be served',
      15_000,
    );
    const counts = await shares(harness, 'half.example.com', 1000);
    expect(Object.keys(counts).sort()).to.deep.equal(['500', 'a']);
    // The 500 share is drawn per request (rand in the route's policy), so its count is binomial(1000, 1/4): a
    // standard deviation of 13.7. A 10% window (225..275) is only 1.8 of them: it fails by chance about 1 run in 14, and failed a fresh-clone run;
    // 4.5 of them (±62) fails by chance once in about 150,000 runs and still tells 1/4 from 1/6 or 1/3.
    expect(counts['a']).to.be.within(688, 812);
    expect(counts['500']).to.be.within(188, 312);
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

  it("waits the longest HAProxy can (past the backend's own server timeout) for a rule whose timeouts.backendRequest is 0, and as long as timeouts.request for a rule with that alone", async () => {
    const slowAnnotations = { 'haproxy.org/timeout-server': '300ms' };
    await harness.write(
      'unlimited.yaml',
      docs(
        service('echo-slow', [{ port: 80, targetPort: portOf(echoA) }]),
        slice('echo-slow-1', 'echo-slow', undefined, portOf(echoA)),
        // An Ingress gives the Service port's backend, shared with the route, a server timeout of 300ms.
        ingress('slow-ingress', 'slow-ingress.example.com', [['/', 'Prefix', 'echo-slow', { number: 80 }]], undefined, { annotations: slowAnnotations }),
        httpRoute(
          'unlimited',
          'unlimited.example.com',
          `    - { matches: [ { path: { type: PathPrefix, value: /none } } ], timeouts: { backendRequest: 0s }, ${to('echo-slow')} }
    - { matches: [ { path: { type: PathPrefix, value: /default } } ], ${to('echo-slow')} }
    - { matches: [ { path: { type: PathPrefix, value: /request } } ], timeouts: { request: 900ms }, ${to('echo-slow')} }
`,
        ),
      ),
    );
    await eventually(
      () => Promise.all(['/none', '/default', '/request'].map((path) => ask(harness, 'unlimited.example.com', path))),
      (answers) => answers.every((answer) => answer.status === 200),
      'the routes without a limit to be served',
      15_000,
    );
    expect((await ask(harness, 'unlimited.example.com', '/default', { 'x-delay': '1000' })).status).to.equal(504);
    expect((await ask(harness, 'unlimited.example.com', '/none', { 'x-delay': '1000' })).status).to.equal(200);
    // The deadline to respond bounds the wait for the server's answer (HAProxy has no deadline for a whole exchange):
    // past the backend's own 300ms, short of 900ms, answered; past 900ms, 504.
    expect((await ask(harness, 'unlimited.example.com', '/request', { 'x-delay': '400' })).status).to.equal(200);
    expect((await ask(harness, 'unlimited.example.com', '/request', { 'x-delay': '1500' })).status).to.equal(504);
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
    const prefixed = (path: string) => (rendered: Rendered) => mapsList(rendered, ['path-prefix.map'], `new.example.com${path}/`);
    let mark = harness.mark();
    await harness.write('new.yaml', httpRoute('new', 'new.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /one } } ], ${to('echo-b')} }\n`));
    let { deployed } = await deploymentWhere(harness, mark, prefixed('/one'), 'the deployment serving /one');
    expect(deployed.result.mode).to.equal('runtime');
    expect((await seen(harness, 'new.example.com', '/one/x')).backend).to.equal('b');
    mark = harness.mark();
    await harness.write('new.yaml', httpRoute('new', 'new.example.com', `    - { matches: [ { path: { type: PathPrefix, value: /two } } ], ${to('echo-b')} }\n`));
    ({ deployed } = await deploymentWhere(harness, mark, prefixed('/two'), 'the deployment serving /two'));
    expect(deployed.result.mode).to.equal('runtime');
    expect((await seen(harness, 'new.example.com', '/two')).backend).to.equal('b');
    expect((await ask(harness, 'new.example.com', '/one/x')).status).to.equal(404);
    expect(await harness.reloads()).to.equal(reloads);
  });

  // After the conformance scenario HTTPRouteRequestMirror, with the copy's method, headers and body checked too.
  it("sends a copy of each request to a RequestMirror's Service and answers the client from the backend alone; a second route to that mirror and its endpoint changes need no reload", async () => {
    const first = await Mirror.start();
    const moved = await Mirror.start();
    try {
      const reloads = await harness.reloads();
      // The Service and the route in one file: a route read before its mirror's Service would be served without the mirror first.
      const route = httpRoute('mirror', 'mirror.example.com', `    - matches: [ { path: { type: PathPrefix, value: /copy } } ]\n      ${mirrorTo('mirror')}\n      ${to('echo-a')}\n`);
      const mirrorAt = (port: number) => docs(service('mirror', [{ port: 80, targetPort: port }]), slice('mirror-1', 'mirror', undefined, port), route);
      let mark = harness.mark();
      await harness.write('mirror.yaml', mirrorAt(first.port));
      await eventually(
        async () => (await ask(harness, 'mirror.example.com', '/copy/probe')).status === 200 && first.copies.some((c) => c.url === '/copy/probe'),
        (mirrored) => mirrored,
        'the mirrored route to be served',
        15_000,
      );
      // The first mirror loads the mirror script and adds the mirror frontend and its policy's rules. HAProxy
      // serves the copies before the deployment's outcome is out (as the harness's start may still be): the next
      // mark must come after the outcome of this reload.
      const firstDeployed = await harness.log.waitFor(
        mark,
        (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed' && o.result.mode === 'reload' && o.result.reloadReason !== 'HAProxy started',
        'the reload of the first mirror',
      );
      expect(firstDeployed.result.reloadReason).to.match(/request-mirror/);
      expect(await harness.reloads()).to.equal(reloads + 1);
      const headers = { 'x-test': 'one', 'content-type': 'text/plain', 'x-haproxy-template-ic-mirror-backend': 'default_echo-b_80' };
      const answer = await ask(harness, 'mirror.example.com', '/copy/one?q=1', headers, false, 'POST', 'payload');
      expect(answer.status).to.equal(200);
      const served = JSON.parse(answer.body) as Seen;
      expect([served.backend, served.url]).to.deep.equal(['a', '/copy/one?q=1']);
      const copy = await eventually(
        async () => first.copies.find((c) => c.url === '/copy/one?q=1'),
        (c) => c !== undefined,
        'the copy at the mirror',
      );
      expect([copy!.method, copy!.body, copy!.headers['host'], copy!.headers['x-test'], copy!.headers['content-type']]).to.deep.equal([
        'POST',
        'payload',
        'mirror.example.com',
        'one',
        'text/plain',
      ]);
      // A client never names the mirror's backend: its header is not copied, and the mirror frontend's is taken off.
      expect(copy!.headers).to.not.have.property('x-haproxy-template-ic-mirror-backend');

      // A deployment of nothing new (a render the first write's batch still owed) may come first: the change's is the next that changes something.
      const changed = (from: number) =>
        harness.log.waitFor(from, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed' && o.result.mode !== 'unchanged', 'the deployment of the change');
      mark = harness.mark();
      await harness.write('mirror-2.yaml', httpRoute('mirror-2', 'mirror-2.example.com', `    - ${mirrorTo('mirror')}\n      ${to('echo-b')}\n`));
      expect((await changed(mark)).result.mode).to.equal('runtime');
      expect((await seen(harness, 'mirror-2.example.com', '/two')).backend).to.equal('b');
      await eventually(
        async () => first.copies.some((c) => c.url === '/two' && c.headers['host'] === 'mirror-2.example.com'),
        (found) => found,
        "the second route's copy at the mirror",
      );

      mark = harness.mark();
      await harness.write('mirror.yaml', mirrorAt(moved.port));
      expect((await changed(mark)).result.mode).to.equal('runtime');
      await eventually(
        async () => (await ask(harness, 'mirror.example.com', '/copy/moved')).status === 200 && moved.copies.some((c) => c.url === '/copy/moved'),
        (found) => found,
        "copies at the mirror's new endpoint",
      );
      expect(await harness.reloads()).to.equal(reloads + 1);
    } finally {
      await Promise.all([first.stop(), moved.stop()]);
    }
  });

  it('mirrors about the share of requests percent asks for, and answers clients alike whether the mirror holds its answer, is down or answers an error', async () => {
    const half = await Mirror.start();
    const held = await Mirror.start();
    const failing = await Mirror.start();
    held.hold = true;
    failing.status = 500;
    try {
      const dead = await Mirror.start();
      const deadPort = dead.port;
      await dead.stop();
      const rule = (path: string, mirror: string) => `    - matches: [ { path: { type: PathPrefix, value: ${path} } } ]\n      ${mirror}\n      ${to('echo-a')}\n`;
      await harness.write(
        'mirrors.yaml',
        docs(
          service('mirror-half', [{ port: 80, targetPort: half.port }]),
          slice('mirror-half-1', 'mirror-half', undefined, half.port),
          service('mirror-held', [{ port: 80, targetPort: held.port }]),
          slice('mirror-held-1', 'mirror-held', undefined, held.port),
          service('mirror-dead', [{ port: 80, targetPort: deadPort }]),
          slice('mirror-dead-1', 'mirror-dead', undefined, deadPort),
          service('mirror-failing', [{ port: 80, targetPort: failing.port }]),
          slice('mirror-failing-1', 'mirror-failing', undefined, failing.port),
          httpRoute(
            'mirrors',
            'mirrors.example.com',
            rule('/half', mirrorTo('mirror-half', 50)) + rule('/held', mirrorTo('mirror-held')) + rule('/dead', mirrorTo('mirror-dead')) + rule('/failing', mirrorTo('mirror-failing')),
          ),
        ),
      );
      await eventually(
        async () => (await ask(harness, 'mirrors.example.com', '/failing/probe')).status === 200 && failing.copies.some((c) => c.url === '/failing/probe'),
        (mirrored) => mirrored,
        'the mirrored routes to be served',
        15_000,
      );
      const count = 1000;
      for (let i = 0; i < count; i++) expect((await ask(harness, 'mirrors.example.com', `/half/${i}`)).status).to.equal(200);
      const copies = () => new Set(half.copies.filter((c) => /^\/half\/\d+$/.test(c.url)).map((c) => c.url)).size;
      // A copy leaves after its request's answer: wait for the last ones, then for none to come.
      let last = -1;
      await eventually(
        async () => {
          const before = last;
          last = copies();
          return last === before;
        },
        (settled) => settled,
        'the copies to settle',
      );
      // Each request is copied at random (rand in its policy): binomial(1000, 1/2), a standard deviation of 15.8;
      // 4.5 of them either side fails by chance about once in 150,000 runs.
      expect(last).to.be.within(429, 571);
      for (const path of ['/held', '/dead', '/failing']) {
        for (let i = 0; i < 20; i++) {
          const answer = await ask(harness, 'mirrors.example.com', `${path}/${i}`);
          expect(answer.status, path).to.equal(200);
          expect((JSON.parse(answer.body) as Seen).backend).to.equal('a');
        }
      }
      // The held mirror got its copies and answered none: the clients were answered without it.
      await eventually(
        async () => held.copies.filter((c) => /^\/held\/\d+$/.test(c.url)).length,
        (n) => n === 20,
        'the held copies',
      );
      expect(held.held.length).to.equal(held.copies.length);
      await eventually(
        async () => failing.copies.filter((c) => /^\/failing\/\d+$/.test(c.url)).length,
        (n) => n === 20,
        "the failing mirror's copies",
      );
    } finally {
      await Promise.all([half.stop(), held.stop(), failing.stop()]);
    }
  });

  it('copies only the requests sent to the backendRef whose own filters hold a RequestMirror', async () => {
    const mirror = await Mirror.start();
    try {
      await harness.write(
        'share-mirror.yaml',
        docs(
          service('mirror-share', [{ port: 80, targetPort: mirror.port }]),
          slice('mirror-share-1', 'mirror-share', undefined, mirror.port),
          httpRoute(
            'share-mirror',
            'share-mirror.example.com',
            `    - backendRefs: [ { name: echo-a, port: 80, weight: 1, ${mirrorTo('mirror-share')} }, { name: echo-b, port: 80, weight: 1 } ]\n`,
          ),
        ),
      );
      await eventually(
        () => ask(harness, 'share-mirror.example.com', '/probe'),
        (answer) => answer.status === 200,
        'the route to be served',
        15_000,
      );
      const answered: Record<string, string[]> = { a: [], b: [] };
      for (let i = 0; i < 20; i++) answered[(await seen(harness, 'share-mirror.example.com', `/n${i}`)).backend]!.push(`/n${i}`);
      // The choice counts requests: every two give each share one.
      expect([answered['a']!.length, answered['b']!.length]).to.deep.equal([10, 10]);
      const copied = await eventually(
        async () => mirror.copies.map((copy) => copy.url).filter((url) => url.startsWith('/n')),
        (urls) => urls.length >= answered['a']!.length,
        "the copies of echo-a's requests",
      );
      expect(copied.sort()).to.deep.equal(answered['a']!.sort());
    } finally {
      await mirror.stop();
    }
  });
});
