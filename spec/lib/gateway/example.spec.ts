import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONTROLLER_NAME } from '../../../lib/gateway/api.ts';
import { readGatewayApi } from '../../../lib/gateway/gateway-api.ts';
import { parseManifests } from '../../../lib/kube/manifests.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { buildMapModel } from '../../../lib/map-model/build-model.ts';
import { routedObjects } from '../../../lib/routing-view/model-sources.ts';
import { sources } from '../ingress/fixtures.ts';

describe('the Gateway API example (examples/gateway-api/shop.yaml)', () => {
  it('is read whole: its Gateway served, its route accepted with every reference resolved, and every rule routed to the demo backends', async () => {
    const file = fileURLToPath(new URL('../../../examples/gateway-api/shop.yaml', import.meta.url));
    const { manifests, errors } = parseManifests(await readFile(file, 'utf8'), file);
    expect(errors).to.deep.equal([]);
    const objects: readonly KubeObject[] = manifests.map((manifest) => manifest.object);
    const of = (kind: string) => objects.filter((object) => object.kind === kind);
    const model = readGatewayApi({
      controllerName: DEFAULT_CONTROLLER_NAME,
      gatewayClasses: of('GatewayClass'),
      gateways: of('Gateway'),
      httpRoutes: of('HTTPRoute'),
      referenceGrants: [],
      service: (namespace, name) => of('Service').find((object) => object.metadata.namespace === namespace && object.metadata.name === name),
      secret: () => undefined,
      namespace: () => undefined,
    });
    expect(model.excluded).to.deep.equal([]);
    const route = model.routes.get('default/shop')!;
    expect(route.parents.map((parent) => parent.acceptance.accepted)).to.deep.equal([true]);
    expect(route.unresolved).to.deep.equal([]);
    expect(model.records.map((record) => `${record.host.key} ${record.path.kind} ${record.path.value}`)).to.deep.equal([
      'shop.example.com exact /health',
      'shop.example.com prefix /api',
      'shop.example.com prefix /',
    ]);
    // Every record routed: map lines to the Service backends and the canary's split backend, each with
    // the servers of the EndpointSlices the demo's backends answer on (`npm run demo -- gateway-api`).
    const served = buildMapModel({ ...sources({ services: of('Service'), slices: of('EndpointSlice') }), ...routedObjects(model) });
    expect(served.warnings).to.deep.equal([]);
    expect(
      served.backends.map((backend) => backend.servers.map((server) => `${server.address}:${server.port}${server.weight === undefined ? '' : ` weight ${server.weight}`}`)),
    ).to.deep.equal([['127.0.0.1:18083'], ['127.0.0.1:18083 weight 256', '127.0.0.1:18084 weight 28'], ['127.0.0.1:18081', '127.0.0.1:18082']]);
    expect(served.exactRoutes.map((line) => `${line.key} ${line.backend}`)).to.deep.equal(['shop.example.com/api default_shop_1_split', 'shop.example.com/health default_api_8080']);
    expect(served.prefixRoutes.map((line) => `${line.key} ${line.backend}`)).to.deep.equal(['shop.example.com/api/ default_shop_1_split', 'shop.example.com/ default_web_80']);
    expect(served.policies.map((policy) => policy.requestHeaders?.set)).to.deep.equal([[{ name: 'X-Shop-Route', value: 'api' }]]);
    expect(served.backends.map((backend) => backend.name)).to.deep.equal(['default_api_8080', 'default_shop_1_split', 'default_web_80']);
  });
});
