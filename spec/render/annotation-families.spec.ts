import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ControllerConfig } from '../../lib/config/types.ts';
import { selectionFor } from '../../lib/kube/select.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { createRenderer } from '../../lib/render/renderer.ts';
import { routingViews } from '../../lib/routing-view/routing-view.ts';
import { renderedFilePaths } from '../../lib/render/write-files.ts';
import { buildStores } from '../../lib/store/build-stores.ts';
import { FAMILY_ROWS, prefixed } from '../lib/annotations/family-rows.ts';
import { endpointSlice, ingress, path, rule, service, tlsSecret } from '../lib/ingress/fixtures.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * The acceptance of issue 18: a setting spelled in either annotation family
 * renders the same files with the shipped templates, so an Ingress migrated
 * from ingress-nginx keeps its behaviour under haproxy.org/ spellings and
 * the reverse. The settings layer's own spec (family-equivalence) compares
 * what is read; this one compares what HAProxy is given.
 */

const NAMESPACE = 'shop';

/** The Secrets the rows name: a CA for backend verification, users for basic auth. */
const secrets: readonly KubeObject[] = [
  tlsSecret('site-tls', LEAF_CERT, LEAF_KEY, NAMESPACE),
  {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: 'backend-ca', namespace: NAMESPACE },
    data: { 'ca.crt': Buffer.from(LEAF_CERT).toString('base64') },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: 'users', namespace: NAMESPACE },
    // An htpasswd line with a hash of bcrypt's form (nothing here checks a password against it).
    data: { auth: Buffer.from(`alice:$2y$05$${'a'.repeat(53)}\n`).toString('base64') },
  },
];

/** Settings that ask for what HAProxy does anyway, rendered as if nothing were asked. */
const AS_WITHOUT = new Set(['h1 in clear text']);

function world(annotations: Record<string, string> | undefined, tls: boolean): KubeObject[] {
  return [
    ingress('web', {
      namespace: NAMESPACE,
      ...(annotations === undefined ? {} : { annotations }),
      rules: [rule('shop.example.com', path('/', 'web', 80), path('/api', 'web', 80))],
      ...(tls ? { tls: [{ hosts: ['shop.example.com'], secretName: 'site-tls' }] } : {}),
    }),
    service('web', [{ name: 'http', port: 80, targetPort: 8080 }], NAMESPACE),
    endpointSlice(
      'web-1',
      'web',
      [{ name: 'http', port: 8080 }],
      [
        { addresses: ['10.0.0.1'], ready: true },
        { addresses: ['10.0.0.2'], ready: true },
      ],
      { namespace: NAMESPACE },
    ),
    ...secrets,
  ];
}

describe('annotation families: the same setting spelled either way renders the same files', () => {
  let config: ControllerConfig;

  before(() => {
    const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
    config = loaded.config;
  });

  /** Every file a render of these objects writes, by path, with what was excluded; a renderer of its own each time, so no cache carries over. */
  function render(objects: readonly KubeObject[]): { files: Map<string, string>; excluded: readonly string[] } {
    const byResource = new Map<string, KubeObject[]>();
    for (const resource of config.watchedResources) byResource.set(resource.name, objects.filter(selectionFor(resource)));
    const output = createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, byResource, config.ignoreFields), baseDir: '/etc/haproxy' });
    return { files: renderedFilePaths('', output.files, config.dataplane), excluded: output.excluded.map((problem) => `${problem.object} ${problem.field}: ${problem.message}`) };
  }

  for (const row of FAMILY_ROWS) {
    it(row.setting, () => {
      const tls = row.context?.tls === true;
      const haproxy = render(world(prefixed('haproxy.org/', row.haproxy), tls));
      const nginx = render(world(prefixed('nginx.ingress.kubernetes.io/', row.nginx), tls));
      expect([haproxy.excluded, nginx.excluded]).to.deep.equal([[], []]);
      expect(Object.fromEntries(nginx.files)).to.deep.equal(Object.fromEntries(haproxy.files));
      // A setting renders something: the files differ from those of the Ingress without annotations.
      const plain = Object.fromEntries(render(world(undefined, tls)).files);
      if ((row.expected.backend === undefined && row.expected.route === undefined) || AS_WITHOUT.has(row.setting)) expect(Object.fromEntries(haproxy.files)).to.deep.equal(plain);
      else expect(Object.fromEntries(haproxy.files)).not.to.deep.equal(plain);
    });
  }
});
