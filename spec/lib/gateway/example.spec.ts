import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONTROLLER_NAME } from '../../../lib/gateway/api.ts';
import { readGatewayApi } from '../../../lib/gateway/gateway-api.ts';
import { parseManifests } from '../../../lib/kube/manifests.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

describe('the Gateway API example (examples/gateway-api/shop.yaml)', () => {
  it('is read whole: its Gateway served, its route accepted with every reference resolved', async () => {
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
  });
});
