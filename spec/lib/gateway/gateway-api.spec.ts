import { expect } from 'chai';
import { certificateClaims } from '../../../lib/gateway/certificates.ts';
import { readGatewayApi, type GatewayApiModel } from '../../../lib/gateway/gateway-api.ts';
import { caConfigMap, gateway, gatewayClass, httpListener, httpRoute, namespaceObject, referenceGrant, service, sources, tlsSecret, toService } from './fixtures.ts';
import { gatewayStatus } from '../../../lib/gateway/status.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

interface WrittenCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
}

/** A Gateway's status as gatewayStatus writes it. */
interface WrittenStatus {
  readonly conditions: readonly WrittenCondition[];
  readonly listeners: readonly { readonly name: string; readonly conditions: readonly WrittenCondition[] }[];
}

const parentRefs = [{ name: 'gw', namespace: 'infra' }];

function acceptance(model: GatewayApiModel, route: string) {
  return model.routes.get(route)!.parents.map((parent) => parent.acceptance);
}

describe('readGatewayApi', () => {
  describe('GatewayClass', () => {
    it('takes only classes with this controller name, and refuses parameters', () => {
      const model = readGatewayApi(
        sources({
          classes: [gatewayClass('haproxy'), gatewayClass('other', 'example.com/other'), gatewayClass('param', undefined, { parametersRef: { group: '', kind: 'ConfigMap', name: 'x' } })],
        }),
      );
      expect([...model.classes.keys()]).to.deep.equal(['haproxy', 'param']);
      expect(model.classes.get('haproxy')!.refusal).to.equal(undefined);
      expect(model.classes.get('param')!.refusal).to.include({ reason: 'InvalidParameters' });
    });

    it('serves no Gateway of a refused class, naming the class in its problems', () => {
      const model = readGatewayApi(
        sources({
          classes: [gatewayClass('param', undefined, { parametersRef: { group: '', kind: 'ConfigMap', name: 'x' } })],
          gateways: [gateway('gw', [httpListener()], 'infra', 'param')],
        }),
      );
      const outcome = model.gateways.get('infra/gw')!;
      expect(outcome.served).to.equal(undefined);
      expect(outcome.problems).to.deep.equal([
        { object: 'Gateway infra/gw', field: 'spec.gatewayClassName', message: 'GatewayClass param is not accepted: spec.parametersRef: this controller takes no parameters; remove it' },
      ]);
    });

    it('leaves Gateways of other classes alone', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()], 'infra', 'someone-else')] }));
      expect(model.gateways.size).to.equal(0);
    });
  });

  describe('attachment', () => {
    it('accepts a route in the Gateway namespace on a listener admitting Same, and translates it into records', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('web', { parentRefs, hostnames: ['web.example.com'], rules: [toService('web')] })],
          services: [service('infra', 'web')],
        }),
      );
      expect(acceptance(model, 'infra/web')[0]).to.include({ accepted: true });
      expect(model.records).to.have.length(1);
      expect(model.records[0]).to.deep.include({
        host: { key: 'web.example.com', wildcard: 'none' },
        path: { kind: 'prefix', value: '/' },
        backends: [{ namespace: 'infra', service: 'web', port: 8080, weight: 1 }],
        entrypoints: [{ port: 80, protocol: 'HTTP' }],
      });
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('http')).to.equal(1);
    });

    it('refuses a route from another namespace by default: NotAllowedByListeners', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], routes: [httpRoute('web', { parentRefs, rules: [toService('web')] }, 'apps')] }));
      expect(acceptance(model, 'apps/web')[0]).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
      expect(model.records).to.deep.equal([]);
      expect(model.gateways.get('infra/gw')!.attachedRoutes.get('http')).to.equal(0);
    });

    it('admits namespaces by All and by a Selector on the namespace labels', () => {
      const selector = { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'web' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] } } };
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener('all', { allowedRoutes: { namespaces: { from: 'All' } } }), httpListener('sel', { port: 8080, allowedRoutes: selector })])],
          routes: [
            httpRoute('a', { parentRefs: [{ ...parentRefs[0], sectionName: 'sel' }], rules: [toService('web')] }, 'team-web'),
            httpRoute('b', { parentRefs: [{ ...parentRefs[0], sectionName: 'sel' }], rules: [toService('web')] }, 'team-dev'),
            httpRoute('c', { parentRefs: [{ ...parentRefs[0], sectionName: 'all' }], rules: [toService('web')] }, 'team-dev'),
          ],
          namespaces: [namespaceObject('team-web', { team: 'web', env: 'prod' }), namespaceObject('team-dev', { team: 'web', env: 'dev' })],
        }),
      );
      expect(acceptance(model, 'team-web/a')[0]).to.include({ accepted: true });
      expect(acceptance(model, 'team-dev/b')[0]).to.include({ accepted: false, reason: 'NotAllowedByListeners' });
      expect(acceptance(model, 'team-dev/c')[0]).to.include({ accepted: true });
    });

    it('refuses a sectionName or port no listener has: NoMatchingParent', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('a', { parentRefs: [{ ...parentRefs[0], sectionName: 'nope' }] }), httpRoute('b', { parentRefs: [{ ...parentRefs[0], sectionName: 'http', port: 81 }] })],
        }),
      );
      expect(acceptance(model, 'infra/a')[0]).to.include({ accepted: false, reason: 'NoMatchingParent' });
      expect(acceptance(model, 'infra/b')[0]).to.include({ accepted: false, reason: 'NoMatchingParent' });
    });

    it('intersects hostnames as conformance HTTPRouteHostnameIntersection does', () => {
      const listeners = [
        httpListener('exact', { hostname: 'very.specific.com' }),
        httpListener('wild', { port: 8080, hostname: '*.wildcard.io' }),
        httpListener('wide', { port: 8081, hostname: '*.anotherwildcard.io' }),
      ];
      const route = (name: string, hostnames: string[], sectionName: string) => httpRoute(name, { parentRefs: [{ ...parentRefs[0], sectionName }], hostnames, rules: [toService('web')] });
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', listeners)],
          routes: [
            route('r1', ['non.matching.com', '*.nonmatchingwildcard.io', 'very.specific.com'], 'exact'),
            route('r2', ['non.matching.com', 'wildcard.io', 'foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io'], 'wild'),
            route('r3', ['*.anotherwildcard.io', '*.b.anotherwildcard.io'], 'wide'),
            route('r4', ['specific.but.wrong.com', 'wildcard.io'], 'wild'),
          ],
          services: [service('infra', 'web')],
        }),
      );
      const hosts = (name: string) => model.records.filter((record) => record.origin.name === name).map((record) => record.host.key);
      expect(hosts('r1')).to.deep.equal(['very.specific.com']);
      expect(hosts('r2').toSorted()).to.deep.equal(['bar.wildcard.io', 'foo.bar.wildcard.io', 'foo.wildcard.io']);
      expect(hosts('r3').toSorted()).to.deep.equal(['*.anotherwildcard.io', '*.b.anotherwildcard.io']);
      expect(acceptance(model, 'infra/r4')[0]).to.include({ accepted: false, reason: 'NoMatchingListenerHostname' });
    });

    it('names a route with a bad value and refuses it: UnsupportedValue, no records', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [
            httpRoute('bad', { parentRefs, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/a\nbind :1' } }], backendRefs: [{ name: 'web', port: 8080 }] }] }),
            httpRoute('good', { parentRefs, rules: [toService('web')] }),
          ],
          services: [service('infra', 'web')],
        }),
      );
      expect(acceptance(model, 'infra/bad')[0]).to.include({ accepted: false, reason: 'UnsupportedValue' });
      expect(model.excluded.map((problem) => [problem.object, problem.field])).to.deep.include(['HTTPRoute infra/bad', 'spec.rules[0].matches[0].path.value']);
      expect(model.records.map((record) => record.origin.name)).to.deep.equal(['good']);
    });
  });

  describe('backend references', () => {
    const crossNamespace = httpRoute('web', { parentRefs, rules: [{ backendRefs: [{ name: 'web', namespace: 'apps', port: 8080 }] }] });

    it('resolves a Service in the route namespace', () => {
      const model = readGatewayApi(
        sources({ gateways: [gateway('gw', [httpListener()])], routes: [httpRoute('web', { parentRefs, rules: [toService('web')] })], services: [service('infra', 'web')] }),
      );
      expect(model.routes.get('infra/web')!.unresolved).to.deep.equal([]);
    });

    it('BackendNotFound for a missing Service, its share answered 500', () => {
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], routes: [httpRoute('web', { parentRefs, rules: [toService('gone')] })] }));
      expect(model.routes.get('infra/web')!.unresolved.map((fault) => fault.reason)).to.deep.equal(['BackendNotFound']);
      expect(model.records[0]!.backends[0])
        .to.have.property('refused')
        .that.matches(/Service infra\/gone does not exist/);
    });

    it('RefNotPermitted across namespaces without a ReferenceGrant, resolved with one', () => {
      const base = { gateways: [gateway('gw', [httpListener()])], routes: [crossNamespace], services: [service('apps', 'web')] };
      expect(
        readGatewayApi(sources(base))
          .routes.get('infra/web')!
          .unresolved.map((fault) => fault.reason),
      ).to.deep.equal(['RefNotPermitted']);
      const grant = referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service' }]);
      expect(readGatewayApi(sources({ ...base, grants: [grant] })).routes.get('infra/web')!.unresolved).to.deep.equal([]);
      const wrongName = referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service', name: 'other' }]);
      expect(
        readGatewayApi(sources({ ...base, grants: [wrongName] }))
          .routes.get('infra/web')!
          .unresolved.map((fault) => fault.reason),
      ).to.deep.equal(['RefNotPermitted']);
    });

    it("resolves a RequestMirror's backendRef as a backendRef: BackendNotFound, RefNotPermitted without a grant; the mirror dropped, the route served", () => {
      const mirroring = (target: Record<string, unknown>) =>
        httpRoute('web', { parentRefs, rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: target } }], backendRefs: [{ name: 'web', port: 8080 }] }] });
      const world = (target: Record<string, unknown>, grants: KubeObject[] = []) =>
        readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], routes: [mirroring(target)], services: [service('infra', 'web'), service('apps', 'shadow')], grants }));
      const missing = world({ name: 'gone', port: 8080 });
      expect(missing.routes.get('infra/web')!.unresolved.map((fault) => fault.reason)).to.deep.equal(['BackendNotFound']);
      expect(missing.records.map((record) => [record.backends.map((backend) => backend.service), record.settings.mirrors])).to.deep.equal([[['web'], undefined]]);
      expect(
        world({ name: 'shadow', namespace: 'apps', port: 8080 })
          .routes.get('infra/web')!
          .unresolved.map((fault) => fault.reason),
      ).to.deep.equal(['RefNotPermitted']);
      const grant = referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service' }]);
      const granted = world({ name: 'shadow', namespace: 'apps', port: 8080 }, [grant]);
      expect(granted.routes.get('infra/web')!.unresolved).to.deep.equal([]);
      expect(granted.records[0]!.settings.mirrors).to.deep.equal([{ namespace: 'apps', service: 'shadow', port: 8080 }]);
    });

    it("resolves an ExternalAuth filter's backendRef as a backendRef: refused without a grant (every request then 500), served with one", () => {
      const asking = httpRoute('web', {
        parentRefs,
        rules: [
          { filters: [{ type: 'ExternalAuth', externalAuth: { protocol: 'HTTP', backendRef: { name: 'auth', namespace: 'apps', port: 80 } } }], backendRefs: [{ name: 'web', port: 8080 }] },
        ],
      });
      const world = (grants: KubeObject[] = []) =>
        readGatewayApi(sources({ gateways: [gateway('gw', [httpListener()])], routes: [asking], services: [service('infra', 'web'), service('apps', 'auth')], grants }));
      const refused = world();
      expect(refused.routes.get('infra/web')!.unresolved.map((fault) => fault.reason)).to.deep.equal(['RefNotPermitted']);
      expect(refused.records[0]!.settings.gatewayExternalAuth)
        .to.have.property('refused')
        .that.matches(/externalAuth\.backendRef: Service apps\/auth is in another namespace/);
      const grant = referenceGrant('apps', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'infra' }], [{ group: '', kind: 'Service' }]);
      const granted = world([grant]);
      expect(granted.routes.get('infra/web')!.unresolved).to.deep.equal([]);
      expect(granted.records[0]!.settings.gatewayExternalAuth).to.not.have.property('refused');
    });

    it('InvalidKind for a backend that is not a Service', () => {
      const model = readGatewayApi(
        sources({ gateways: [gateway('gw', [httpListener()])], routes: [httpRoute('web', { parentRefs, rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'b' }] }] })] }),
      );
      expect(model.routes.get('infra/web')!.unresolved.map((fault) => fault.reason)).to.deep.equal(['InvalidKind']);
    });
  });

  describe('listeners', () => {
    const https = (refs: Record<string, unknown>[]) => httpListener('https', { port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: refs } });

    it('serves an HTTPS listener with a TLS Secret, and refuses one across namespaces without a grant', () => {
      const served = readGatewayApi(sources({ gateways: [gateway('gw', [https([{ name: 'cert' }])])], secrets: [tlsSecret('infra', 'cert')] }));
      expect(served.gateways.get('infra/gw')!.served!.listeners[0]).to.include({ serving: true });
      const refused = readGatewayApi(sources({ gateways: [gateway('gw', [https([{ name: 'cert', namespace: 'certs' }])])], secrets: [tlsSecret('certs', 'cert')] }));
      expect(refused.gateways.get('infra/gw')!.served!.listeners[0]!.faults.map((fault) => fault.reason)).to.deep.equal(['RefNotPermitted']);
      const grant = referenceGrant('certs', [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], [{ group: '', kind: 'Secret' }]);
      const granted = readGatewayApi(sources({ gateways: [gateway('gw', [https([{ name: 'cert', namespace: 'certs' }])])], secrets: [tlsSecret('certs', 'cert')], grants: [grant] }));
      expect(granted.gateways.get('infra/gw')!.served!.listeners[0]).to.include({ serving: true });
    });

    // After the conformance scenarios GatewayFrontendClientCertificateValidation, GatewayInvalidFrontendClientCertificateValidation
    // and GatewayFrontendInvalidDefaultClientCertificateValidation.
    it("gives HTTPS listeners their port's client certificate validation, else the default, and refuses those whose CA references all fail, each with the specification's reason", () => {
      const validation = (refs: Record<string, unknown>[], mode?: string) => ({ validation: { caCertificateRefs: refs, ...(mode ? { mode } : {}) } });
      const listener = (name: string, port: number) => httpListener(name, { port, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } });
      const object = gateway('gw', [
        listener('https', 443),
        listener('unresolved', 7443),
        listener('invalid-kind', 8443),
        listener('grant-missing', 6443),
        listener('plain', 9443),
        httpListener('http'),
      ]);
      (object['spec'] as Record<string, unknown>)['tls'] = {
        frontend: {
          default: validation([{ kind: 'ConfigMap', group: '', name: 'ca' }]),
          perPort: [
            { port: 7443, tls: validation([{ kind: 'ConfigMap', group: '', name: 'missing' }]) },
            { port: 8443, tls: validation([{ kind: 'Service', group: '', name: 'web' }]) },
            { port: 6443, tls: validation([{ kind: 'ConfigMap', group: '', name: 'ca', namespace: 'web' }]) },
            { port: 9443, tls: {} },
            { port: 80, tls: validation([{ kind: 'ConfigMap', group: '', name: 'missing' }], 'AllowInsecureFallback') },
          ],
        },
      };
      const model = readGatewayApi(sources({ gateways: [object], secrets: [tlsSecret('infra', 'cert')], configMaps: [caConfigMap('infra', 'ca'), caConfigMap('web', 'ca')] }));
      const outcome = model.gateways.get('infra/gw')!;
      expect(outcome.problems).to.deep.equal([]);
      const states = outcome.served!.listeners;
      expect(states.map((state) => [state.listener.name, state.serving, state.clientCa])).to.deep.equal([
        ['https', true, { ca: { namespace: 'infra', name: 'ca', configMap: true }, mode: 'AllowValidOnly' }],
        ['unresolved', false, undefined],
        ['invalid-kind', false, undefined],
        ['grant-missing', false, undefined],
        ['plain', true, undefined],
        // An HTTP listener validates no client certificate, whatever its port's configuration says.
        ['http', true, undefined],
      ]);
      const status = gatewayStatus(outcome, [], 'deployed', '2026-11-28T00:00:00Z') as unknown as WrittenStatus;
      const conditions = (name: string) => Object.fromEntries(status.listeners.find((entry) => entry.name === name)!.conditions.map((c) => [c.type, `${c.status} ${c.reason}`]));
      expect(conditions('https')).to.include({ Accepted: 'True Accepted', ResolvedRefs: 'True ResolvedRefs', Programmed: 'True Programmed' });
      expect(conditions('unresolved')).to.include({ Accepted: 'False NoValidCACertificate', ResolvedRefs: 'False InvalidCACertificateRef', Programmed: 'False Invalid' });
      expect(conditions('invalid-kind')).to.include({ Accepted: 'False NoValidCACertificate', ResolvedRefs: 'False InvalidCACertificateKind' });
      expect(conditions('grant-missing')).to.include({ Accepted: 'False NoValidCACertificate', ResolvedRefs: 'False RefNotPermitted' });
      expect(status.conditions.map((c) => c.type)).to.deep.equal(['Accepted', 'Programmed']);
      // A grant in the CA's namespace lets the listener use it.
      const grant = referenceGrant('web', [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], [{ group: '', kind: 'ConfigMap' }]);
      const granted = readGatewayApi(
        sources({ gateways: [object], secrets: [tlsSecret('infra', 'cert')], configMaps: [caConfigMap('infra', 'ca'), caConfigMap('web', 'ca')], grants: [grant] }),
      );
      expect(granted.gateways.get('infra/gw')!.served!.listeners[3]).to.deep.include({
        serving: true,
        clientCa: { ca: { namespace: 'web', name: 'ca', configMap: true }, mode: 'AllowValidOnly' },
      });
    });

    it('reads a CA from a Secret, serves the first usable reference alone, and says InsecureFrontendValidationMode while a listener falls back', () => {
      const caSecret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: 'infra', name: 'ca' },
        type: 'Opaque',
        data: { 'ca.crt': Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64') },
      };
      const object = gateway('gw', [httpListener('https', { port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } })]);
      const withMode = (mode: string) => {
        (object['spec'] as Record<string, unknown>)['tls'] = {
          frontend: {
            default: {
              validation: {
                mode,
                caCertificateRefs: [
                  { kind: 'Secret', group: '', name: 'ca' },
                  { kind: 'ConfigMap', group: '', name: 'ca' },
                ],
              },
            },
          },
        };
        return readGatewayApi(sources({ gateways: [object], secrets: [tlsSecret('infra', 'cert'), caSecret], configMaps: [caConfigMap('infra', 'ca')] })).gateways.get('infra/gw')!;
      };
      const fallback = withMode('AllowInsecureFallback');
      const [state] = fallback.served!.listeners;
      expect(state).to.deep.include({ serving: true, clientCa: { ca: { namespace: 'infra', name: 'ca' }, mode: 'AllowInsecureFallback' } });
      expect(state!.faults.map((fault) => [fault.reason, fault.message])).to.deep.equal([
        ['InvalidCACertificateRef', 'spec.tls.frontend.default.validation.caCertificateRefs[1]: one CA certificate reference is served per listener, and an earlier one is'],
      ]);
      const condition = (outcome: typeof fallback) =>
        (gatewayStatus(outcome, [], 'deployed', '2026-11-28T00:00:00Z') as unknown as WrittenStatus).conditions.find((c) => c.type === 'InsecureFrontendValidationMode');
      expect(condition(fallback)).to.include({ status: 'True', reason: 'ConfigurationChanged' });
      expect(condition(withMode('AllowValidOnly'))).to.equal(undefined);
      expect(withMode('Sometimes').problems.map((problem) => problem.field)).to.deep.equal(['spec.tls.frontend.default.validation.mode']);
    });

    it('marks an unsupported protocol, a bad hostname and a port conflict on their listener only', () => {
      const model = readGatewayApi(
        sources({
          gateways: [
            gateway('gw', [
              httpListener('ok'),
              httpListener('udp', { port: 9000, protocol: 'UDP' }),
              httpListener('host', { port: 81, hostname: 'a b' }),
              httpListener('clash', { protocol: 'HTTPS', tls: {} }),
            ]),
          ],
        }),
      );
      const states = model.gateways.get('infra/gw')!.served!.listeners;
      expect(states.map((state) => state.serving)).to.deep.equal([false, false, false, false]);
      expect(states[0]!.conflict).to.include({ reason: 'ProtocolConflict' });
      expect(states[1]!.faults[0]).to.include({ reason: 'UnsupportedProtocol' });
      expect(states[2]!.faults[0]).to.include({ reason: 'UnsupportedValue' });
    });

    it('maps listener ports onto the frontends the template declares: PortUnavailable otherwise', () => {
      const model = readGatewayApi({ ...sources({ gateways: [gateway('gw', [httpListener(), httpListener('odd', { port: 8081 })])] }), frontends: [{ port: 80, protocol: 'HTTP' }] });
      const states = model.gateways.get('infra/gw')!.served!.listeners;
      expect(states.map((state) => state.serving)).to.deep.equal([true, false]);
      expect(states[1]!.faults[0]).to.include({ reason: 'PortUnavailable' });
    });
  });

  describe('entrypoints', () => {
    const https = httpListener('https', { port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } });
    const onlyOver = (model: GatewayApiModel, route: string) => [...new Set(model.routes.get(route)!.records.map((record) => record.onlyOver ?? 'both'))];

    it('marks the records of a route on listeners of one protocol alone while listeners of the other are served', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener(), https])],
          routes: [
            httpRoute('both', { parentRefs }),
            httpRoute('tls', { parentRefs: [{ ...parentRefs[0], sectionName: 'https' }] }),
            httpRoute('plain', { parentRefs: [{ ...parentRefs[0], sectionName: 'http' }] }),
            httpRoute('port', { parentRefs: [{ ...parentRefs[0], port: 443 }] }),
          ],
          secrets: [tlsSecret('infra', 'cert')],
        }),
      );
      expect(['both', 'tls', 'plain', 'port'].map((route) => onlyOver(model, `infra/${route}`))).to.deep.equal([['both'], ['HTTPS'], ['HTTP'], ['HTTPS']]);
      expect(model.routes.get('infra/port')!.records[0]!.entrypoints).to.deep.equal([{ port: 443, protocol: 'HTTPS' }]);
    });

    it('leaves records unmarked while no listener of the other protocol is served', () => {
      // The HTTPS listener's certificate does not resolve: it serves nothing, so plain HTTP is all there is.
      const model = readGatewayApi(sources({ gateways: [gateway('gw', [httpListener(), https])], routes: [httpRoute('plain', { parentRefs })] }));
      expect(onlyOver(model, 'infra/plain')).to.deep.equal(['both']);
    });
  });

  describe('certificates of HTTPS listeners', () => {
    const https = (name: string, extra: Record<string, unknown> = {}) =>
      httpListener(name, { port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: `${name}-cert` }] }, allowedRoutes: { namespaces: { from: 'All' } }, ...extra });

    it("serves a listener's certificate for its hostname; the first listener's without one for every other name, and a later one's for the hostnames of its routes, never without a name", () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [https('named', { hostname: '*.shop.example.com' }), https('open', { port: 8443 }), https('idle', { port: 9443 }), https('later', { port: 7443 })])],
          routes: [
            httpRoute('r', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'open' }], hostnames: ['b.example.com', 'a.example.com'] }),
            httpRoute('s', { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'later' }], hostnames: ['c.example.com'] }),
          ],
          secrets: ['named-cert', 'open-cert', 'idle-cert', 'later-cert'].map((name) => tlsSecret('infra', name)),
        }),
      );
      expect(certificateClaims(model)).to.deep.equal([
        { namespace: 'infra', secret: 'named-cert', hosts: ['*.shop.example.com'], object: 'Gateway infra/gw', field: 'spec.listeners[0].tls.certificateRefs[0]', fallback: false },
        { namespace: 'infra', secret: 'open-cert', hosts: [], object: 'Gateway infra/gw', field: 'spec.listeners[1].tls.certificateRefs[0]', fallback: true },
        { namespace: 'infra', secret: 'later-cert', hosts: ['c.example.com'], object: 'Gateway infra/gw', field: 'spec.listeners[3].tls.certificateRefs[0]', fallback: false },
      ]);
    });
  });

  describe('filters into route settings', () => {
    it('reads header modifiers, a redirect, a rewrite, a mirror and timeouts', () => {
      const rule = {
        matches: [{ path: { type: 'PathPrefix', value: '/api/' }, headers: [{ name: 'X-Version', value: 'v2' }], queryParams: [{ name: 'debug', value: '1' }], method: 'POST' }],
        filters: [
          { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: 'a 1%' }], add: [{ name: 'X-B', value: 'b' }], remove: ['X-C'] } },
          { type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['Server'] } },
          { type: 'URLRewrite', urlRewrite: { hostname: 'internal.example.com', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } },
          { type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 8080 }, percent: 50 } },
        ],
        backendRefs: [
          { name: 'web', port: 8080, weight: 3 },
          { name: 'canary', port: 8080, weight: 1, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Canary', value: 'yes' }] } }] },
        ],
        timeouts: { request: '10s', backendRequest: '1m0s' },
      };
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('web', { parentRefs, rules: [rule] })],
          services: ['web', 'canary', 'shadow'].map((name) => service('infra', name)),
        }),
      );
      // backendRequest longer than request is refused, as the specification says.
      expect(acceptance(model, 'infra/web')[0]).to.include({ accepted: false, reason: 'UnsupportedValue' });
      const fixed = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('web', { parentRefs, rules: [{ ...rule, timeouts: { request: '1m', backendRequest: '1500ms' } }] })],
          services: ['web', 'canary', 'shadow'].map((name) => service('infra', name)),
        }),
      );
      const [record] = fixed.records;
      expect(record).to.deep.include({
        path: { kind: 'prefix', value: '/api' },
        headers: [{ name: 'x-version', kind: 'exact', value: 'v2' }],
        query: [{ name: 'debug', kind: 'exact', value: '1' }],
        method: 'POST',
      });
      expect(record!.settings).to.deep.equal({
        requestHeaders: { set: [{ name: 'X-A', value: 'a 1%' }], add: [{ name: 'X-B', value: 'b' }], remove: ['X-C'] },
        responseHeaders: { set: [], add: [], remove: ['Server'] },
        upstreamHost: 'internal.example.com',
        rewrite: { kind: 'prefix', replacement: '/v2' },
        mirrors: [{ namespace: 'infra', service: 'shadow', port: 8080, percent: 50 }],
        timeouts: { request: 60_000, backendRequest: 1_500 },
      });
      expect(record!.backends.map((backend) => [backend.service, backend.weight, backend.settings?.requestHeaders?.set])).to.deep.equal([
        ['web', 3, undefined],
        ['canary', 1, [{ name: 'X-Canary', value: 'yes' }]],
      ]);
    });

    it('reads a redirect, and refuses one beside a rewrite', () => {
      const redirect = {
        type: 'RequestRedirect',
        requestRedirect: { scheme: 'https', hostname: 'example.org', port: 8443, statusCode: 301, path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } },
      };
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [
            httpRoute('r', { parentRefs, rules: [{ filters: [redirect] }] }),
            httpRoute('both', { parentRefs, rules: [{ filters: [redirect, { type: 'URLRewrite', urlRewrite: { hostname: 'x.example.com' } }] }] }),
          ],
        }),
      );
      expect(model.records.find((record) => record.origin.name === 'r')!.settings.redirect).to.deep.equal({
        code: 301,
        scheme: 'https',
        host: 'example.org',
        port: 8443,
        path: { kind: 'full', path: '/new' },
      });
      expect(acceptance(model, 'infra/both')[0]).to.include({ accepted: false, reason: 'UnsupportedValue' });
    });

    it('refuses filters it does not serve, by name', () => {
      const model = readGatewayApi(
        sources({
          gateways: [gateway('gw', [httpListener()])],
          routes: [httpRoute('r', { parentRefs, rules: [{ filters: [{ type: 'ExtensionRef', extensionRef: { group: 'x', kind: 'Y', name: 'z' } }] }] })],
        }),
      );
      expect(model.excluded.find((problem) => problem.object === 'HTTPRoute infra/r')!.message).to.match(/"ExtensionRef" filters are not supported/);
    });
  });

  it('gives the same records whatever order the objects come in', () => {
    const routes = ['a', 'b', 'c'].map((name, i) =>
      httpRoute(
        name,
        { parentRefs, rules: [{ matches: [{ path: { type: 'Exact', value: `/${name}` } }, { path: { value: '/' } }], backendRefs: [{ name: 'web', port: 8080 }] }] },
        'infra',
        `2026-01-0${3 - i}T00:00:00Z`,
      ),
    );
    const input = { gateways: [gateway('gw', [httpListener()])], services: [service('infra', 'web')] };
    const once = readGatewayApi(sources({ ...input, routes })).records;
    expect(readGatewayApi(sources({ ...input, routes: routes.toReversed() })).records).to.deep.equal(once);
    // Exact paths before the catch-all prefixes; ties go to the oldest route, and c was created first.
    expect(once.map((record) => `${record.origin.name}:${record.path.kind}`)).to.deep.equal(['c:exact', 'b:exact', 'a:exact', 'c:prefix', 'b:prefix', 'a:prefix']);
  });
});
