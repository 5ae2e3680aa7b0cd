/**
 * HTTPRoutes through the Data Plane API (the emulator of
 * spec/support/dataplane-emulator, or a real dataplaneapi, in front of a
 * real HAProxy, as in dataplane-acceptance-cases.ts): the first configuration, with an exact
 * hostname, a wildcard one (host-suffix.map) and a weighted split, is one
 * reload; then a new HTTPRoute to a served Service, a new wildcard
 * hostname and a weight change are runtime map entries and server
 * weights, no reload; so is a weight change of backendRefs with filters of
 * their own (a choice in the path map value). Real HTTP through the
 * HAProxy proves each. A RequestMirror's script reaches the HAProxy as a
 * general file, and its mirror gets the copies. A TCP listener is a frontend
 * of its own (a reload), and its TCPRoute's weights then change at runtime.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataplaneLocal, DATAPLANE_POD } from '../support/dataplane-local.ts';
import type { PeerKind } from '../support/dataplane-peer.ts';
import { eventually } from '../support/eventually.ts';
import { documents, gateway, service, slice } from '../support/manifest-builders.ts';
import { httpGet } from '../support/traffic.ts';
import { Mirror } from '../support/mirror-backend.ts';
import { reservePort } from '../support/ports.ts';

const GATEWAY = gateway('{ name: http, port: 80, protocol: HTTP }');

/** An HTTPRoute on the Gateway for one hostname, with one rule's backendRefs. */
function httpRoute(name: string, hostname: string, backendRefs: readonly { readonly name: string; readonly weight?: number }[]): string {
  const refs = backendRefs.map((ref) => `{ name: ${ref.name}, port: 80${ref.weight === undefined ? '' : `, weight: ${ref.weight}`} }`).join(', ');
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ "${hostname}" ]
  rules: [ { backendRefs: [ ${refs} ] } ]
`;
}

/** The first HTTPRoutes: an exact hostname, a wildcard one, and canary.example.com split between web-a and web-b by weight. */
function routes(a: number, b: number): string {
  return documents(
    httpRoute('first', 'first.example.com', [{ name: 'web-a' }]),
    httpRoute('wild', '*.wild.example.com', [{ name: 'web-b' }]),
    httpRoute('canary', 'canary.example.com', [
      { name: 'web-a', weight: a },
      { name: 'web-b', weight: b },
    ]),
  );
}

/** The cases against the Data Plane API `kind` starts, standing for a pod. */
export function describeHttpRoutes(kind: PeerKind): void {
  describe(`HTTPRoutes through the Data Plane API: ${kind.name}`, function () {
    this.timeout(90_000);
    let local: DataplaneLocal;
    let a = 0;
    let b = 0;

    const mapFile = (name: string) => readFile(join(local.emulator.mapsDir, name), 'utf8');

    before(async () => {
      local = await DataplaneLocal.start(
        2,
        ([portA, portB]) => ({
          'gateway.yaml': GATEWAY,
          'services.yaml': documents(
            service('web-a', [{ port: 80, targetPort: portA! }]),
            slice('web-a-0', 'web-a', undefined, portA!),
            service('web-b', [{ port: 80, targetPort: portB! }]),
            slice('web-b-0', 'web-b', undefined, portB!),
          ),
          'routes.yaml': routes(1, 1),
        }),
        'gateway-api-dataplane-',
        kind,
      );
      [a, b] = local.backends as [number, number];
      expect((await local.deployed(0)).result.mode).to.equal('reload');
      await local.served('first.example.com', [a]);
      await local.served('canary.example.com', [a, b]);
    });

    after(() => local?.stop());

    it('serves a wildcard hostname from host-suffix.map, for names any number of labels below its domain', async () => {
      expect(await mapFile('host-suffix.map')).to.match(/^\S*wild\.example\.com\s/m);
      await local.served('one.wild.example.com', [b]);
      await local.served('two.levels.wild.example.com', [b]);
      // The domain itself is not under its wildcard: the specification's `*.` needs one label at least.
      expect(await httpGet(DATAPLANE_POD.address, local.httpPort, 'wild.example.com')).to.not.match(/^200 backend/);
    });

    it('serves a new HTTPRoute to a served Service, and a new wildcard hostname, through runtime map entries: no reload', async () => {
      const before = await local.reloads();
      const from = local.log.mark();
      await local.write('more.yaml', documents(httpRoute('second', 'second.example.com', [{ name: 'web-b' }]), httpRoute('other-wild', '*.other.example.com', [{ name: 'web-a' }])));
      expect((await local.deployed(from)).result.mode).to.equal('runtime');
      await local.served('second.example.com', [b]);
      await local.served('deep.er.other.example.com', [a]);
      await local.served('a.b.c.d.e.f.g.h.other.example.com', [a]);
      expect(await mapFile('host-suffix.map')).to.match(/^\S*other\.example\.com\s/m);
      expect(await local.reloads()).to.equal(before);
    });

    it('changes the weights of backendRefs with filters of their own through a runtime map entry: no reload', async () => {
      // web-a's backendRef replaces the whole path of its requests alone.
      const filtered = (weightA: number) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: filtered, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ filtered.example.com ]
  rules:
    - backendRefs:
        - { name: web-a, port: 80, weight: ${weightA}, filters: [ { type: URLRewrite, urlRewrite: { path: { type: ReplaceFullPath, replaceFullPath: /from-a } } } ] }
        - { name: web-b, port: 80, weight: 1 }
`;
      const twenty = () => Promise.all(Array.from({ length: 20 }, () => httpGet(DATAPLANE_POD.address, local.httpPort, 'filtered.example.com')));
      let from = local.log.mark();
      await local.write('filtered.yaml', filtered(1));
      await local.deployed(from);
      // Weights 1 and 1: every two requests take each backendRef once.
      const halves = await eventually(twenty, (answers) => answers.every((answer) => answer.startsWith('200 ')), 'the filtered route to be served');
      expect(halves.filter((answer) => answer === `200 backend ${a} GET /from-a`)).to.have.length(10);
      expect(halves.filter((answer) => answer === `200 backend ${b} GET /`)).to.have.length(10);
      const before = await local.reloads();
      from = local.log.mark();
      await local.write('filtered.yaml', filtered(0));
      expect((await local.deployed(from)).result.mode).to.equal('runtime');
      expect(await twenty()).to.deep.equal(Array.from({ length: 20 }, () => `200 backend ${b} GET /`));
      expect(await local.reloads()).to.equal(before);
    });

    it('changes the weights of a split through the runtime: no reload', async () => {
      const before = await local.reloads();
      const from = local.log.mark();
      await local.write('routes.yaml', routes(0, 1));
      expect((await local.deployed(from)).result.mode).to.equal('runtime');
      // Weight 0 takes web-a out of the split: every request of a run goes to web-b.
      await local.served('canary.example.com', [b]);
      await eventually(
        async () => Promise.all(Array.from({ length: 20 }, () => httpGet(DATAPLANE_POD.address, local.httpPort, 'canary.example.com'))),
        (answers) => answers.every((answer) => answer === `200 backend ${b} GET /`),
        'every canary request to web-b',
      );
      expect(await local.reloads()).to.equal(before);
    });

    it('serves a TCP listener in a frontend of its own, and changes its TCPRoute’s weights through the runtime: no reload', async () => {
      const tcpPort = await reservePort(DATAPLANE_POD.address);
      const tcpRoute = (weightA: number, weightB: number) => `apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: { name: tcp, namespace: default }
spec:
  parentRefs: [ { name: gw, sectionName: tcp } ]
  rules: [ { backendRefs: [ { name: web-a, port: 80, weight: ${weightA} }, { name: web-b, port: 80, weight: ${weightB} } ] } ]
`;
      // HTTP through the TCP frontend: the stream reaches a backend as it came.
      const twenty = () => Promise.all(Array.from({ length: 20 }, () => httpGet(DATAPLANE_POD.address, tcpPort, 'any.example.com')));
      let from = local.log.mark();
      await local.write('gateway.yaml', gateway('{ name: http, port: 80, protocol: HTTP }', `{ name: tcp, port: ${tcpPort}, protocol: TCP }`));
      await local.write('tcp.yaml', tcpRoute(1, 0));
      await eventually(twenty, (answers) => answers.every((answer) => answer === `200 backend ${a} GET /`), 'every TCP connection to web-a');
      expect((await local.deployed(from)).result.mode).to.equal('reload');
      const before = await local.reloads();
      from = local.log.mark();
      await local.write('tcp.yaml', tcpRoute(0, 1));
      expect((await local.deployed(from)).result.mode).to.equal('runtime');
      expect(await twenty()).to.deep.equal(Array.from({ length: 20 }, () => `200 backend ${b} GET /`));
      expect(await local.reloads()).to.equal(before);
    });

    it("sends a RequestMirror's copies through the Data Plane API's HAProxy, its script uploaded among the general files", async () => {
      const mirror = await Mirror.start();
      try {
        const from = local.log.mark();
        await local.write(
          'mirror.yaml',
          documents(
            service('mirror', [{ port: 80, targetPort: mirror.port }]),
            slice('mirror-0', 'mirror', undefined, mirror.port),
            `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mirrored, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ mirrored.example.com ]
  rules: [ { filters: [ { type: RequestMirror, requestMirror: { backendRef: { name: mirror, port: 80 } } } ], backendRefs: [ { name: web-a, port: 80 } ] } ]
`,
          ),
        );
        await eventually(
          () => httpGet(DATAPLANE_POD.address, local.httpPort, 'mirrored.example.com', '/copied'),
          (answer) => answer === `200 backend ${a} GET /copied` && mirror.copies.some((copy) => copy.url === '/copied'),
          'the copy at the mirror',
          20_000,
        );
        expect(await readFile(join(local.emulator.baseDir, 'general', 'haproxy-template-ic-request-mirror.lua'), 'utf8')).to.match(/core\.register_action\('mirror'/);
        // HAProxy serves the copies before the deployment's outcome is out: the next case must not take it for its own.
        expect((await local.deployed(from)).result.mode).to.equal('reload');
      } finally {
        await mirror.stop();
      }
    });

    it('serves query parameter conditions on RegularExpression paths, and a second route with conditions already held through runtime map entries: no reload', async () => {
      /** A route whose rules each match `path` as a regular expression, with a query parameter v=two or with none. */
      const regexRoute = (name: string, hostname: string, rules: readonly (readonly [string, boolean, string])[]) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ ${hostname} ]
  rules:
${rules.map(([path, query, to]) => `    - { matches: [ { path: { type: RegularExpression, value: "${path}" }${query ? ', queryParams: [ { name: v, value: two } ]' : ''} } ], backendRefs: [ { name: ${to}, port: 80 } ] }\n`).join('')}`;
      const get = (host: string, path: string) => httpGet(DATAPLANE_POD.address, local.httpPort, host, path);
      // The first regex line with conditions adds their rules: a reload, which must be over before the second route is written.
      const first = local.log.mark();
      await local.write(
        'regex.yaml',
        regexRoute('regex', 'regex.example.com', [
          ['/r[0-9]+', true, 'web-b'],
          ['/r[0-9]+', false, 'web-a'],
        ]),
      );
      await eventually(
        async () => [await get('regex.example.com', '/r1?v=two'), await get('regex.example.com', '/r1')],
        (answers) => answers[0] === `200 backend ${b} GET /r1?v=two` && answers[1] === `200 backend ${a} GET /r1`,
        'the regex conditions to be served',
      );
      expect((await local.deployed(first)).result.mode).to.equal('reload');
      // A shorter expression: its line goes last in the regex map, where the runtime adds it. Its escaped dot
      // (YAML "\\." is the expression's \.) must reach HAProxy's runtime as an escape, not as any character.
      const before = await local.reloads();
      const from = local.log.mark();
      await local.write('regex-again.yaml', regexRoute('regex-again', 'rx.example.com', [['/[0-9]\\\\.j', true, 'web-a']]));
      const deployed = await local.deployed(from);
      expect(deployed.result.mode, JSON.stringify(deployed.result)).to.equal('runtime');
      expect(await get('rx.example.com', '/5.j?v=two')).to.equal(`200 backend ${a} GET /5.j?v=two`);
      expect(await get('rx.example.com', '/5xj?v=two')).to.not.match(/^200 backend/);
      expect(await get('rx.example.com', '/5.j')).to.not.match(/^200 backend/);
      expect(await local.reloads()).to.equal(before);
    });
  });
}
