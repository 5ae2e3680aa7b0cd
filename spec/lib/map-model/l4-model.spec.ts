import { expect } from 'chai';
import type { L4Listener, L4Route, L4Routing } from '../../../lib/routing/l4-route.ts';
import type { MapModel } from '../../../lib/map-model/types.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { endpointSlice, service, sources, tlsSecret } from '../ingress/fixtures.ts';
import { LEAF_CERT, LEAF_KEY } from '../../support/tls-fixture.ts';

/** The map model's layer-4 part: frontends per port, l4.map lines, tcp backends with servers from EndpointSlices. */

const echo = service('echo', [{ port: 7000 }], 'infra');
const canary = service('canary', [{ port: 7000 }], 'infra');
const echoSlice = (addresses: readonly string[]) =>
  endpointSlice(
    'echo-1',
    'echo',
    [{ port: 17000 }],
    addresses.map((address) => ({ addresses: [address], ready: true })),
    { namespace: 'infra' },
  );
const canarySlice = endpointSlice('canary-1', 'canary', [{ port: 17001 }], [{ addresses: ['10.0.0.9'], ready: true }], { namespace: 'infra' });

const listener = (port: number, mode: L4Listener['mode'], object = 'Gateway infra/gw', certificates: L4Listener['certificates'] = []): L4Listener => ({
  port,
  mode,
  certificates,
  object,
  field: 'spec.listeners[0]',
});

function route(name: string, port: number, mode: L4Route['mode'], sni: string | undefined, backends: L4Route['backends'], age = 0): L4Route {
  return { port, mode, sni, backends, origin: { kind: mode === 'tcp' ? 'TCPRoute' : 'TLSRoute', namespace: 'infra', name, age, rule: 0, match: 0, field: 'spec.rules[0]' } };
}

const to = (serviceName: string, weight = 1, refused?: string) => ({ namespace: 'infra', service: serviceName, port: 7000, weight, ...(refused ? { refused } : {}) });

function build(l4: L4Routing, world: { slices?: readonly KubeObject[]; secrets?: readonly KubeObject[] } = {}, cache?: MapModelCache): MapModel {
  return buildMapModel({ ...sources({ services: [echo, canary], slices: world.slices ?? [echoSlice(['10.0.0.1']), canarySlice], secrets: world.secrets ?? [] }), l4 }, cache);
}

describe('the layer-4 map model', () => {
  it('makes a frontend per listener port, an l4.map line per port or SNI name, and a backend per Service port', () => {
    const model = build({
      listeners: [listener(9000, 'tcp'), listener(8443, 'tls-passthrough')],
      routes: [route('tcp', 9000, 'tcp', undefined, [to('echo')]), route('tls', 8443, 'tls-passthrough', '*.example.com', [to('echo')])],
    });
    expect(model.l4.frontends.map(({ port, mode }) => [port, mode])).to.deep.equal([
      [8443, 'tls-passthrough'],
      [9000, 'tcp'],
    ]);
    expect(model.l4.lines).to.deep.equal([
      { key: '8443/*.example.com', backend: 'l4_infra_echo_7000' },
      { key: '9000', backend: 'l4_infra_echo_7000' },
    ]);
    expect(model.l4.sniLookups.map((lookup) => lookup.labels)).to.deep.equal([2]);
    expect(model.l4.backends.map((backend) => [backend.name, backend.servers.map((server) => `${server.address}:${server.port}`)])).to.deep.equal([
      ['l4_infra_echo_7000', ['10.0.0.1:17000']],
    ]);
  });

  it('weights the servers of several backendRefs in one backend named after the route', () => {
    const model = build({ listeners: [listener(9000, 'tcp')], routes: [route('split', 9000, 'tcp', undefined, [to('echo', 3), to('canary', 1)])] });
    expect(model.l4.lines).to.deep.equal([{ key: '9000', backend: 'l4_infra_split_split' }]);
    expect(model.l4.backends[0]!.servers.map((server) => [server.address, server.weight])).to.deep.equal([
      ['10.0.0.1', '256'],
      ['10.0.0.9', '85'],
    ]);
  });

  it('serves a port to the first route (the older), warning of the other', () => {
    const model = build({
      listeners: [listener(9000, 'tcp')],
      routes: [route('older', 9000, 'tcp', undefined, [to('echo')], 1), route('newer', 9000, 'tcp', undefined, [to('canary')], 2)],
    });
    expect(model.l4.lines).to.deep.equal([{ key: '9000', backend: 'l4_infra_echo_7000' }]);
    expect(model.warnings).to.deep.include({ object: 'TCPRoute infra/newer', field: 'spec.rules[0]', message: 'not served for port 9000: older TCPRoute infra/older serves it' });
  });

  it('refuses the connections of a route none of whose backendRefs resolves', () => {
    const model = build({ listeners: [listener(9000, 'tcp')], routes: [route('gone', 9000, 'tcp', undefined, [to('missing', 1, 'Service infra/missing does not exist')])] });
    expect(model.l4.lines).to.deep.equal([{ key: '9000', backend: 'refused' }]);
    expect(model.l4.backends).to.deep.equal([]);
  });

  it('leaves out a listener of another mode on a port another Gateway serves, and its routes', () => {
    const model = build({
      listeners: [listener(8443, 'tls-passthrough', 'Gateway infra/a'), listener(8443, 'tcp', 'Gateway infra/b')],
      routes: [route('tcp', 8443, 'tcp', undefined, [to('echo')])],
    });
    expect(model.l4.frontends.map((frontend) => frontend.mode)).to.deep.equal(['tls-passthrough']);
    expect(model.l4.lines).to.deep.equal([]);
    expect(model.excluded).to.deep.include({
      object: 'Gateway infra/b',
      field: 'spec.listeners[0]',
      message: 'port 8443 is served as TLS Passthrough by Gateway infra/a spec.listeners[0]: this TCP listener is not served',
    });
  });

  it('serves a Terminate port with its certificates, and not at all without a usable one', () => {
    const certificate = { namespace: 'infra', name: 'cert', object: 'Gateway infra/gw', field: 'spec.listeners[0].tls.certificateRefs[0]' };
    const routing = { listeners: [listener(9443, 'tls-terminate', 'Gateway infra/gw', [certificate])], routes: [route('t', 9443, 'tls-terminate', '*', [to('echo')])] };
    const served = build(routing, { secrets: [tlsSecret('cert', LEAF_CERT, LEAF_KEY, 'infra')] });
    expect(served.l4.frontends[0]).to.deep.include({ terminate: true, certificates: ['infra_cert.pem'] });
    expect(served.l4.certificates.map((file) => file.file)).to.deep.equal(['infra_cert.pem']);
    const missing = build(routing);
    expect(missing.l4.frontends).to.deep.equal([]);
    expect(missing.excluded.map((problem) => problem.message)).to.include('port 9443 ends TLS without a usable certificate: not served');
  });

  it('keeps the model while nothing it reads changed, and follows endpoint changes', () => {
    const cache = new MapModelCache();
    const routing = { listeners: [listener(9000, 'tcp')], routes: [route('tcp', 9000, 'tcp', undefined, [to('echo')])] };
    const slices = [echoSlice(['10.0.0.1'])];
    // `version`: the EndpointSlice store's version, which moves with every change to an EndpointSlice.
    const world = (list: readonly KubeObject[], version: number) => ({
      ...sources({ services: [echo], slices: list }),
      l4: routing,
      versions: { services: 1, endpointSlices: version, secrets: [], configMaps: 1 },
    });
    const first = buildMapModel(world(slices, 1), cache);
    expect(buildMapModel(world(slices, 1), cache).l4).to.equal(first.l4);
    const scaled = buildMapModel(world([echoSlice(['10.0.0.1', '10.0.0.2'])], 2), cache);
    expect(scaled.l4.backends[0]!.servers.map((server) => server.address)).to.deep.equal(['10.0.0.1', '10.0.0.2']);
  });

  it('keeps the other routes’ backends and lines, the same objects, when one route changes and the stores are the same', () => {
    const cache = new MapModelCache();
    const slices = [echoSlice(['10.0.0.1']), canarySlice];
    const world = (routes: readonly L4Route[], version: number) => ({
      ...sources({ services: [echo, canary], slices }),
      l4: { listeners: [listener(8443, 'tls-passthrough')], routes },
      versions: { services: 1, endpointSlices: version, secrets: [], configMaps: 1 },
    });
    const split = route('split', 8443, 'tls-passthrough', 'split.example.com', [to('echo', 90), to('canary', 10)]);
    const plain = route('plain', 8443, 'tls-passthrough', 'plain.example.com', [to('echo')]);
    const first = buildMapModel(world([split, plain], 1), cache).l4;

    // Another route's weights change: the split keeps its backend, the plain route its line.
    const changed = route('plain', 8443, 'tls-passthrough', 'plain.example.com', [to('echo', 50), to('canary', 50)]);
    const second = buildMapModel(world([route('split', 8443, 'tls-passthrough', 'split.example.com', [to('echo', 90), to('canary', 10)]), changed], 1), cache).l4;
    expect(second.backends.find((backend) => backend.name === 'l4_infra_split_split')).to.equal(first.backends.find((backend) => backend.name === 'l4_infra_split_split'));
    expect(second.lines.find((line) => line.key === '8443/split.example.com')).to.equal(first.lines.find((line) => line.key === '8443/split.example.com'));
    expect(second.lines.find((line) => line.key === '8443/plain.example.com')).to.deep.equal({ key: '8443/plain.example.com', backend: 'l4_infra_plain_split' });

    // The split's own weights change: its backend is made again, with the new weights.
    const reweighted = route('split', 8443, 'tls-passthrough', 'split.example.com', [to('echo', 10), to('canary', 90)]);
    const third = buildMapModel(world([reweighted, changed], 1), cache).l4;
    expect(third.backends.find((backend) => backend.name === 'l4_infra_split_split')!.servers.map((server) => [server.address, server.weight])).to.deep.equal([
      ['10.0.0.1', '28'],
      ['10.0.0.9', '256'],
    ]);

    // An EndpointSlice store change resolves every backend again, even of routes that did not change.
    const moved = buildMapModel({ ...world([reweighted, changed], 2), ...sources({ services: [echo, canary], slices: [echoSlice(['10.0.0.2']), canarySlice] }) }, cache).l4;
    expect(moved.backends.find((backend) => backend.name === 'l4_infra_split_split')!.servers.map((server) => server.address)).to.deep.equal(['10.0.0.2', '10.0.0.9']);
  });
});
