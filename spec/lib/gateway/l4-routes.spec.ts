import { expect } from 'chai';
import { GatewayApiMemo, readGatewayApi, type GatewayApiModel } from '../../../lib/gateway/gateway-api.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { statusWrites } from '../../../lib/gateway/status-writer.ts';
import { gateway, grpcRoute, httpListener, l4Route, referenceGrant, service, sources, tlsSecret } from './fixtures.ts';

/** TLSRoutes and TCPRoutes, as the upstream conformance tests (conformance/tests/tlsroute-*.go, tcproute-*.go) judge them. */

const passthrough = (name = 'tls', extra: Record<string, unknown> = {}) => ({ name, port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' }, ...extra });
const terminate = (name = 'tls-terminate', extra: Record<string, unknown> = {}) => ({
  name,
  port: 8443,
  protocol: 'TLS',
  tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
  ...extra,
});
const tcp = (name = 'tcp', extra: Record<string, unknown> = {}) => ({ name, port: 9000, protocol: 'TCP', ...extra });
const toGateway = (sectionName?: string) => [{ name: 'gw', ...(sectionName ? { sectionName } : {}) }];
const toService = (name = 'web', weight?: number) => ({ name, port: 8080, ...(weight === undefined ? {} : { weight }) });

function listener(model: GatewayApiModel, index: number) {
  return model.gateways.get('infra/gw')!.served!.listeners[index]!;
}

function acceptance(model: GatewayApiModel, key: string) {
  return model.l4Routes.get(key)!.parents.map((parent) => parent.acceptance);
}

describe('TLS and TCP listeners and routes', () => {
  describe('listeners', () => {
    it('serves TLSRoutes on a Passthrough listener, and refuses TCPRoute in its allowedRoutes (tlsroute-listener-passthrough-supported-kinds)', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [passthrough('tls', { allowedRoutes: { kinds: [{ kind: 'TLSRoute' }, { kind: 'TCPRoute' }] } })])] }));
      const state = listener(model, 0);
      expect(state.listener.kinds).to.deep.equal([{ group: 'gateway.networking.k8s.io', kind: 'TLSRoute' }]);
      expect(state.faults).to.have.length(1);
      expect(state.faults[0]).to.include({ condition: 'ResolvedRefs', reason: 'InvalidRouteKinds' });
      expect(state.serving).to.equal(true);
    });

    it('admits on each protocol its route kinds alone: HTTPRoutes and GRPCRoutes on HTTP and HTTPS, TLSRoutes on TLS, TCPRoutes on TCP', () => {
      const https = { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } };
      const grpcOnTls = grpcRoute('rpc', { parentRefs: toGateway('tls'), rules: [{ backendRefs: [toService()] }] });
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [httpListener(), https, passthrough(), tcp()])], secrets: [tlsSecret('infra', 'cert')], grpcRoutes: [grpcOnTls] }));
      expect([0, 1, 2, 3].map((index) => listener(model, index).listener.kinds.map((kind) => kind.kind))).to.deep.equal([
        ['HTTPRoute', 'GRPCRoute'],
        ['HTTPRoute', 'GRPCRoute'],
        ['TLSRoute'],
        ['TCPRoute'],
      ]);
      expect(model.routes.get('GRPCRoute infra/rpc')!.parents[0]!.acceptance).to.deep.include({ accepted: false, reason: 'NotAllowedByListeners' });
      const refused = readGatewayApi(sources({ gateways: [gateway('gw', [passthrough('tls', { allowedRoutes: { kinds: [{ kind: 'GRPCRoute' }] } })])] }));
      expect(listener(refused, 0).faults[0]!.message).to.equal('route kinds not served: spec.listeners[0].allowedRoutes.kinds[0] "GRPCRoute" (TLSRoute is, on TLS)');
    });

    it('serves TLSRoutes on a Terminate listener with its certificate, and TCPRoutes on a TCP listener', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [terminate(), tcp()])], secrets: [tlsSecret('infra', 'cert')] }));
      expect(listener(model, 0).serving).to.equal(true);
      expect(listener(model, 0).listener.kinds.map((kind) => kind.kind)).to.deep.equal(['TLSRoute']);
      expect(listener(model, 1).listener.kinds.map((kind) => kind.kind)).to.deep.equal(['TCPRoute']);
      expect(model.l4.listeners).to.deep.equal([
        {
          port: 8443,
          mode: 'tls-terminate',
          certificates: [{ namespace: 'infra', name: 'cert', object: 'Gateway infra/gw', field: 'spec.listeners[0].tls.certificateRefs[0]' }],
          object: 'Gateway infra/gw',
          field: 'spec.listeners[0]',
        },
        { port: 9000, mode: 'tcp', certificates: [], object: 'Gateway infra/gw', field: 'spec.listeners[1]' },
      ]);
    });

    it('refuses Terminate and Passthrough on one port, both with ProtocolConflict (tlsroute-listener-mixed-termination-not-supported)', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [terminate('tls-terminate', { hostname: 'a.example.com' }), passthrough('tls-passthrough', { hostname: 'b.example.com' })])],
          secrets: [tlsSecret('infra', 'cert')],
        }),
      );
      for (const index of [0, 1]) {
        expect(listener(model, index).conflict).to.include({ reason: 'ProtocolConflict' });
        expect(listener(model, index).serving).to.equal(false);
      }
      expect(model.l4.listeners).to.deep.equal([]);
    });

    it('serves two Passthrough listeners on one port with different hostnames', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [passthrough('a', { hostname: 'a.example.com' }), passthrough('b', { hostname: 'b.example.com' })])] }));
      expect([listener(model, 0).serving, listener(model, 1).serving]).to.deep.equal([true, true]);
    });

    it('refuses two TCP listeners on one port, even with hostnames a manifest gives them: HostnameConflict', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [tcp('a', { hostname: 'a.example.com' }), tcp('b', { hostname: 'b.example.com' })])] }));
      for (const index of [0, 1]) expect(listener(model, index).conflict).to.include({ reason: 'HostnameConflict' });
    });

    it('refuses UDP, saying HAProxy has no UDP load balancing', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [{ name: 'dns', port: 53, protocol: 'UDP' }])] }));
      expect(listener(model, 0).serving).to.equal(false);
      expect(listener(model, 0).faults[0]).to.deep.equal({
        condition: 'Accepted',
        reason: 'UnsupportedProtocol',
        message: 'spec.listeners[0].protocol: "UDP" is not served: HAProxy (community edition) has no UDP load balancing',
      });
    });

    it('refuses a TLS or TCP listener on a port the template binds for HTTP: PortUnavailable', () => {
      const model = readGatewayApi({ ...sources({ gateways: [gateway('gw', [tcp('tcp', { port: 80 }), tcp('other', { port: 9000 })])] }), frontends: [{ port: 80, protocol: 'HTTP' }] });
      expect(listener(model, 0).faults[0]).to.deep.equal({ condition: 'Accepted', reason: 'PortUnavailable', message: "port 80 is the template's HTTP frontend's" });
      expect(listener(model, 1).serving).to.equal(true);
    });

    it('refuses a Passthrough HTTPS listener: HTTPS ends TLS', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }])] }));
      expect(listener(model, 0).faults[0]).to.include({ reason: 'UnsupportedValue' });
    });
  });

  describe('TLSRoutes', () => {
    it('attaches by sectionName and serves the hostnames the listener shares, ignoring the others (tlsroute-hostname-intersection)', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [passthrough('tls', { hostname: '*.example.com' })])],
          tlsRoutes: [l4Route('TLSRoute', 'app', { parentRefs: toGateway('tls'), hostnames: ['a.example.com', 'b.example.net'], rules: [{ backendRefs: [toService()] }] })],
          services: [service('infra', 'web')],
        }),
      );
      expect(acceptance(model, 'TLSRoute infra/app')[0]).to.include({ accepted: true });
      expect(model.l4.routes.map((route) => [route.port, route.mode, route.sni])).to.deep.equal([[8443, 'tls-passthrough', 'a.example.com']]);
      expect(model.l4.routes[0]!.backends).to.deep.equal([{ namespace: 'infra', service: 'web', port: 8080, weight: 1 }]);
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('tls')).to.equal(1);
    });

    it('serves a route without hostnames on a listener without one for any SNI name', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [passthrough()])],
          tlsRoutes: [l4Route('TLSRoute', 'any', { parentRefs: toGateway(), rules: [{ backendRefs: [toService()] }] })],
          services: [service('infra', 'web')],
        }),
      );
      expect(model.l4.routes.map((route) => route.sni)).to.deep.equal(['*']);
    });

    it('is not accepted where no hostname matches, on an HTTP listener, or with an unknown sectionName (tlsroute-invalid-no-matching-listener*)', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [passthrough('tls', { hostname: 'a.example.com' }), httpListener()])],
          tlsRoutes: [
            l4Route('TLSRoute', 'elsewhere', { parentRefs: toGateway('tls'), hostnames: ['b.example.com'], rules: [{ backendRefs: [toService()] }] }),
            l4Route('TLSRoute', 'on-http', { parentRefs: toGateway('http'), rules: [{ backendRefs: [toService()] }] }),
            l4Route('TLSRoute', 'nowhere', { parentRefs: toGateway('missing'), rules: [{ backendRefs: [toService()] }] }),
          ],
          services: [service('infra', 'web')],
        }),
      );
      expect(acceptance(model, 'TLSRoute infra/elsewhere')[0]).to.include({ accepted: false, reason: 'NoMatchingListenerHostname' });
      expect(acceptance(model, 'TLSRoute infra/on-http')[0]).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
      expect(acceptance(model, 'TLSRoute infra/nowhere')[0]).to.include({ accepted: false, reason: 'NoMatchingParent' });
      expect(model.l4.routes).to.deep.equal([]);
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('tls')).to.equal(0);
    });

    it('keeps a route whose backend does not exist, its connections refused, with BackendNotFound (tlsroute-invalid-backendref-nonexistent)', () => {
      const model = readGatewayApi(
        sources({ gateways: [gateway('gw', [passthrough()])], tlsRoutes: [l4Route('TLSRoute', 'app', { parentRefs: toGateway(), rules: [{ backendRefs: [toService('gone')] }] })] }),
      );
      const outcome = model.l4Routes.get('TLSRoute infra/app')!;
      expect(outcome.parents[0]!.acceptance).to.include({ accepted: true });
      expect(outcome.unresolved.map((fault) => fault.reason)).to.deep.equal(['BackendNotFound']);
      expect(model.l4.routes[0]!.backends[0]!.refused).to.be.a('string');
    });

    it('refuses a route with a field it cannot read, naming it', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [passthrough()])],
          tlsRoutes: [l4Route('TLSRoute', 'app', { parentRefs: toGateway(), rules: [{ backendRefs: [toService()] }, { backendRefs: [toService()] }] })],
        }),
      );
      expect(acceptance(model, 'TLSRoute infra/app')[0]).to.deep.include({ accepted: false, reason: 'UnsupportedValue' });
      expect(model.excluded).to.deep.include({ object: 'TLSRoute infra/app', field: 'spec.rules', message: 'holds 2 rules: a TLSRoute has exactly one' });
    });
  });

  describe('judged again only where something changed', () => {
    it('keeps the outcome of every route but the changed one while the stores it reads are the same, and judges all again when they are not', () => {
      const memo = new GatewayApiMemo();
      const route = (name: string, hostname: string, serviceName = 'web') =>
        l4Route('TLSRoute', name, { parentRefs: toGateway('tls'), hostnames: [hostname], rules: [{ backendRefs: [toService(serviceName)] }] });
      const steady = route('steady', 'steady.example.com');
      const read = (changing: KubeObject, context: readonly unknown[]): GatewayApiModel =>
        readGatewayApi(
          { ...sources({ gateways: [gateway('gw', [passthrough()])], tlsRoutes: [steady, changing], services: [service('infra', 'web'), service('infra', 'api')] }), context },
          memo,
        );
      const first = read(route('moving', 'moving.example.com'), ['stores', 1]);
      const second = read(route('moving', 'moving.example.com', 'api'), ['stores', 1]);
      expect(second.l4Routes.get('TLSRoute infra/steady')).to.equal(first.l4Routes.get('TLSRoute infra/steady'));
      expect(second.l4.routes.find((record) => record.sni === 'moving.example.com')!.backends[0]!.service).to.equal('api');
      expect(second.gateways.get('infra/gw')!.attachedRoutes.get('tls')).to.equal(2);
      // Another version of a store the judging reads (a Service, a Namespace, a grant): every route is judged again.
      const third = read(route('moving', 'moving.example.com', 'api'), ['stores', 2]);
      expect(third.l4Routes.get('TLSRoute infra/steady')).to.not.equal(first.l4Routes.get('TLSRoute infra/steady'));
      expect(third.l4Routes.get('TLSRoute infra/steady')).to.deep.equal(first.l4Routes.get('TLSRoute infra/steady'));
      expect(third.gateways.get('infra/gw')!.attachedRoutes.get('tls')).to.equal(2);
    });
  });

  describe('TCPRoutes', () => {
    it('accepts two routes on one listener and counts both; the older comes first (tcproute-multiple-routes-attachment)', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [tcp()])],
          tcpRoutes: [
            l4Route('TCPRoute', 'newer', { parentRefs: toGateway('tcp'), rules: [{ backendRefs: [toService('b')] }] }, 'infra', '2026-01-02T00:00:00Z'),
            l4Route('TCPRoute', 'older', { parentRefs: toGateway('tcp'), rules: [{ backendRefs: [toService('a')] }] }),
          ],
          services: [service('infra', 'a'), service('infra', 'b')],
        }),
      );
      expect(acceptance(model, 'TCPRoute infra/older')[0]).to.include({ accepted: true });
      expect(acceptance(model, 'TCPRoute infra/newer')[0]).to.include({ accepted: true });
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('tcp')).to.equal(2);
      expect(model.l4.routes.map((route) => route.origin.name)).to.deep.equal(['older', 'newer']);
    });

    it('keeps weights, and needs a ReferenceGrant from TCPRoutes for a backend in another namespace (tcproute-reference-grant)', () => {
      const route = l4Route('TCPRoute', 'split', {
        parentRefs: toGateway(),
        rules: [{ backendRefs: [toService('web', 3), { name: 'other', namespace: 'apps', port: 8080, weight: 1 }] }],
      });
      const base = { gateways: [gateway('gw', [tcp()])], tcpRoutes: [route], services: [service('infra', 'web'), service('apps', 'other')] };
      const refused = readGatewayApi(sources(base));
      expect(refused.l4Routes.get('TCPRoute infra/split')!.unresolved.map((fault) => fault.reason)).to.deep.equal(['RefNotPermitted']);
      const granted = readGatewayApi(
        sources({ ...base, grants: [referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'TCPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service' }])] }),
      );
      expect(granted.l4Routes.get('TCPRoute infra/split')!.unresolved).to.deep.equal([]);
      expect(granted.l4.routes[0]!.backends.map((backend) => [backend.service, backend.weight])).to.deep.equal([
        ['web', 3],
        ['other', 1],
      ]);
    });

    it('is not accepted on a TLS listener (tcproute-invalid-non-tcp-listener), and writes its status as a tcproute', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [passthrough(), tcp()])],
          tcpRoutes: [l4Route('TCPRoute', 'misplaced', { parentRefs: toGateway('tls'), rules: [{ backendRefs: [toService()] }] })],
          services: [service('infra', 'web')],
        }),
      );
      expect(acceptance(model, 'TCPRoute infra/misplaced')[0]).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
      const writes = statusWrites({ model, controllerName: 'haproxy-template-ic.io/gateway-controller', addresses: [], deployment: 'pending', now: Date.parse('2026-11-24T12:00:00Z') });
      const write = writes.find((candidate) => candidate.resource === 'tcproutes')!;
      const conditions = (write.status['parents'] as { conditions: { type: string; status: string; reason: string }[] }[])[0]!.conditions;
      expect(conditions.map(({ type, status, reason }) => [type, status, reason])).to.deep.equal([
        ['Accepted', 'False', 'NotAllowedByListeners'],
        ['ResolvedRefs', 'True', 'ResolvedRefs'],
      ]);
    });
  });
});
