import { expect } from 'chai';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { ShopBackend, ShopClient, type CallResult } from '../support/grpc-shop.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, gateway, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { CA_CERT, LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * GRPCRoutes routed end to end: a local-mode controller reads a Gateway
 * and GRPCRoutes from manifests, and a real gRPC client (@grpc/grpc-js,
 * cleartext HTTP/2 with prior knowledge) calls through a real HAProxy's
 * plain HTTP listener to real gRPC servers, which HAProxy speaks h2c to:
 * service and method matches, a header match, a request header filter,
 * weights, a new GRPCRoute served without a reload, and gRPC over TLS to an
 * HTTPS listener (h2 by ALPN).
 */

/** gRPC status codes (grpc/doc/statuscodes.md): HTTP 404 from a proxy is UNIMPLEMENTED, 503 UNAVAILABLE (grpc/doc/http-grpc-status-mapping.md). */
const UNIMPLEMENTED = 12;
const UNAVAILABLE = 14;

/** A GRPCRoute on the Gateway's listener for one hostname; `rules` in YAML, indented by four spaces. */
function grpcRoute(name: string, hostname: string, rules: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ ${hostname} ]
  rules:
${rules}`;
}

const to = (serviceName: string) => `backendRefs: [ { name: ${serviceName}, port: 80 } ]`;

const SHOP = grpcRoute(
  'shop',
  'grpc.example.com',
  `    - matches: [ { method: { service: shop.v1.Cart, method: Add } } ]
      filters: [ { type: RequestHeaderModifier, requestHeaderModifier: { set: [ { name: x-env, value: prod } ] } } ]
      ${to('grpc-a')}
    - matches: [ { method: { service: shop.v1.Cart, method: Remove }, headers: [ { name: x-tenant, value: gold } ] } ]
      ${to('grpc-b')}
    - matches: [ { method: { service: shop.v1.Cart, method: Remove } } ]
      ${to('grpc-a')}
    - matches: [ { method: { service: shop.v1.Stock } } ]
      ${to('grpc-b')}
`,
);

/** Stock calls on weights.example.com split 1:3 between the two backends; nothing else routed there. */
const WEIGHTS = grpcRoute(
  'weights',
  'weights.example.com',
  `    - matches: [ { method: { type: RegularExpression, service: 'shop\\.v1\\.St.*' } } ]
      backendRefs: [ { name: grpc-a, port: 80, weight: 1 }, { name: grpc-b, port: 80, weight: 3 } ]
`,
);

const backendOf = (result: CallResult) => (result.ok ? result.answer.backend : `code ${result.code}`);

describe('Gateway API GRPCRoute end to end (real gRPC client and servers)', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let a: ShopBackend;
  let b: ShopBackend;
  const clients: ShopClient[] = [];

  async function client(authority: string, tls = false): Promise<ShopClient> {
    const made = tls ? await ShopClient.connect(`127.0.0.1:${harness.ports.https}`, authority, CA_CERT) : await ShopClient.connect(`127.0.0.1:${harness.ports.http}`, authority);
    clients.push(made);
    return made;
  }

  before(async () => {
    a = await ShopBackend.start('a');
    b = await ShopBackend.start('b');
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    await harness.write(
      'services.yaml',
      docs(
        gateway(
          '{ name: http, port: 80, protocol: HTTP }',
          '{ name: https, port: 443, protocol: HTTPS, hostname: shop.example.com, tls: { mode: Terminate, certificateRefs: [ { name: shop-tls } ] } }',
        ),
        tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY),
        service('grpc-a', [{ port: 80, targetPort: a.port }]),
        slice('grpc-a-1', 'grpc-a', undefined, a.port),
        service('grpc-b', [{ port: 80, targetPort: b.port }]),
        slice('grpc-b-1', 'grpc-b', undefined, b.port),
      ),
    );
    await harness.write('routes.yaml', docs(SHOP, WEIGHTS));
    const shop = await client('grpc.example.com');
    await eventually(
      () => shop.call('Cart', 'Add'),
      (result) => result.ok,
      'the shop GRPCRoute to be served',
      15_000,
    );
    await harness.settled();
  });

  after(async () => {
    for (const made of clients) made.close();
    await harness?.stop();
    await Promise.all([a, b].map((backend) => backend?.stop()));
  });

  it('routes by service and method, an exact service and method to its rule, a service alone to its own, and answers UNIMPLEMENTED where nothing matches', async () => {
    const shop = await client('grpc.example.com');
    const add = await shop.call('Cart', 'Add');
    expect(add).to.deep.include({ ok: true });
    expect(add.ok && add.answer).to.deep.include({ backend: 'a', path: '/shop.v1.Cart/Add' });
    expect(backendOf(await shop.call('Stock', 'Get'))).to.equal('b');
    // weights.example.com routes the Stock service alone: a Cart call there matches nothing.
    const weights = await client('weights.example.com');
    const unmatched = await weights.call('Cart', 'Add');
    expect(unmatched.ok ? 'answered' : unmatched.code).to.equal(UNIMPLEMENTED);
  });

  it('routes by a header match before the same method without one, and applies a rule’s RequestHeaderModifier to its calls alone', async () => {
    const shop = await client('grpc.example.com');
    expect(backendOf(await shop.call('Cart', 'Remove', { 'x-tenant': 'gold' }))).to.equal('b');
    expect(backendOf(await shop.call('Cart', 'Remove', { 'x-tenant': 'silver' }))).to.equal('a');
    expect(backendOf(await shop.call('Cart', 'Remove'))).to.equal('a');
    const add = await shop.call('Cart', 'Add', { 'x-env': 'dev' }, ['x-env']);
    expect(add.ok && add.answer.headers).to.deep.equal({ 'x-env': 'prod' });
    const remove = await shop.call('Cart', 'Remove', { 'x-env': 'dev' }, ['x-env']);
    expect(remove.ok && remove.answer.headers).to.deep.equal({ 'x-env': 'dev' });
  });

  it('splits calls between backendRefs by weight', async () => {
    const weights = await client('weights.example.com');
    const calls = 400;
    const answers = [];
    for (let i = 0; i < calls; i++) answers.push(backendOf(await weights.call('Stock', 'Get')));
    const toB = answers.filter((backend) => backend === 'b').length;
    expect(answers.filter((backend) => backend !== 'a' && backend !== 'b')).to.deep.equal([]);
    // Weights 1:3: b's share is 0.75; a window of 4.5 standard deviations of a binomial of 400 calls (sqrt(400 * 0.75 * 0.25) = 8.66).
    const sd = Math.sqrt(calls * 0.75 * 0.25);
    expect(toB).to.be.within(Math.ceil(calls * 0.75 - 4.5 * sd), Math.floor(calls * 0.75 + 4.5 * sd));
  });

  it('serves a new GRPCRoute to a served Service without a reload', async () => {
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write('added.yaml', grpcRoute('added', 'added.example.com', `    - matches: [ { method: { service: shop.v1.Cart } } ]\n      ${to('grpc-b')}\n`));
    const deployed = await harness.next(mark, 'deployed');
    expect([deployed.result.mode, deployed.result.reloadReason]).to.deep.equal(['runtime', undefined]);
    const added = await client('added.example.com');
    const answer = await eventually(
      () => added.call('Cart', 'Remove'),
      (result) => result.ok,
      'the added GRPCRoute to be served',
      10_000,
    );
    expect(backendOf(answer)).to.equal('b');
    expect(backendOf(await added.call('Stock', 'Get'))).to.equal(`code ${UNIMPLEMENTED}`);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('takes a changed match and changed weights of a GRPCRoute without a reload', async () => {
    const moving = (grpcService: string, weights: readonly [number, number]) =>
      grpcRoute(
        'moving',
        'moving.example.com',
        `    - matches: [ { method: { service: ${grpcService} } } ]\n      backendRefs: [ { name: grpc-a, port: 80, weight: ${weights[0]} }, { name: grpc-b, port: 80, weight: ${weights[1]} } ]\n`,
      );
    // A change's deployment is the next one that changes something: one of nothing new may come first.
    const changed = (from: number) =>
      harness.log.waitFor(from, (o): o is Extract<Outcome, { type: 'deployed' }> => o.type === 'deployed' && o.result.mode !== 'unchanged', 'the deployment of the change');
    let mark = harness.mark();
    await harness.write('moving.yaml', moving('shop.v1.Stock', [1, 1]));
    await changed(mark);
    const route = await client('moving.example.com');
    await eventually(
      () => route.call('Stock', 'Get'),
      (result) => result.ok,
      'the GRPCRoute to be served',
      10_000,
    );
    const reloads = await harness.reloads();

    mark = harness.mark();
    await harness.write('moving.yaml', moving('shop.v1.Cart', [1, 1]));
    expect((await changed(mark)).result.mode).to.equal('runtime');
    await eventually(
      () => route.call('Stock', 'Get'),
      (result) => backendOf(result) === `code ${UNIMPLEMENTED}`,
      'the old match to be gone',
      10_000,
    );
    expect((await route.call('Cart', 'Add')).ok).to.equal(true);

    mark = harness.mark();
    await harness.write('moving.yaml', moving('shop.v1.Cart', [0, 1]));
    expect((await changed(mark)).result.mode).to.equal('runtime');
    await eventually(
      async () => {
        const answers = [];
        for (let i = 0; i < 20; i++) answers.push(backendOf(await route.call('Cart', 'Add')));
        return answers;
      },
      (answers) => answers.every((backend) => backend === 'b'),
      'every call to the backendRef of weight 1',
      10_000,
    );
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('answers UNAVAILABLE for a rule without backendRefs and for one whose backendRef does not resolve, as the GRPCRoute specification asks', async () => {
    const mark = harness.mark();
    const rules = `    - matches: [ { method: { service: shop.v1.Cart } } ]\n    - matches: [ { method: { service: shop.v1.Stock } } ]\n      ${to('missing')}\n`;
    await harness.write('unavailable.yaml', grpcRoute('unavailable', 'unavailable.example.com', rules));
    await harness.next(mark, 'deployed');
    const unavailable = await client('unavailable.example.com');
    const cart = await eventually(
      () => unavailable.call('Cart', 'Add'),
      (result) => !result.ok && result.code !== UNIMPLEMENTED,
      'the rule without backendRefs to be served',
      10_000,
    );
    expect(cart.ok ? 'answered' : cart.code).to.equal(UNAVAILABLE);
    const stock = await unavailable.call('Stock', 'Get');
    expect(stock.ok ? 'answered' : stock.code).to.equal(UNAVAILABLE);
  });

  it('serves gRPC over TLS on an HTTPS listener: HAProxy offers h2 by ALPN on its HTTPS bind', async () => {
    const mark = harness.mark();
    await harness.write('secure.yaml', grpcRoute('secure', 'shop.example.com', `    - ${to('grpc-a')}\n`));
    await harness.next(mark, 'deployed');
    const secure = await client('shop.example.com', true);
    const answer = await eventually(
      () => secure.call('Stock', 'Get'),
      (result) => result.ok,
      'the GRPCRoute over TLS to be served',
      10_000,
    );
    expect(answer.ok && answer.answer).to.deep.include({ backend: 'a', path: '/shop.v1.Stock/Get' });
  });
});
