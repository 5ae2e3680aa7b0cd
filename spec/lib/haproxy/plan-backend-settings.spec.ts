import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { planDeployment } from '../../../lib/haproxy/plan.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { base64, CA_CERT, LEAF_CERT, LEAF_KEY } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service } from '../ingress/fixtures.ts';

/**
 * An endpoint added to a backend with settings, as the shipped template
 * renders it: the server line carries the settings' options (maxconn,
 * inter, ssl, alpn, proto, ca-file) and `add server` takes them all, so
 * the plan stays on the Runtime API; only cookie affinity reloads, because
 * HAProxy 2.6 gives a server added at runtime no cookie.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;

const ROWS: Readonly<Record<string, Record<string, string>>> = {
  hashed: { 'haproxy.org/load-balance': 'hdr(x-user)', 'haproxy.org/timeout-server': '9s' },
  limited: { 'haproxy.org/pod-maxconn': '5', 'haproxy.org/check-http': '/healthz', 'haproxy.org/check-interval': '500ms' },
  h2c: { 'haproxy.org/server-proto': 'h2', 'haproxy.org/check-http': '/healthz' },
  h2: { 'haproxy.org/server-ssl': 'true', 'haproxy.org/server-proto': 'h2', 'haproxy.org/load-balance': 'source' },
  verified: { 'haproxy.org/server-ca': 'default/ca' },
  sticky: { 'haproxy.org/cookie-persistence': 'SRVID' },
};

function renderOutput(endpoints: number) {
  const names = Object.keys(ROWS);
  const ingresses = names.map((name) => {
    const object = ingress(name, { rules: [rule(`${name}.example.com`, path('/', name, 80))] });
    return { ...object, metadata: { ...object.metadata, annotations: ROWS[name] } };
  });
  const slices = names.map((name, i) =>
    endpointSlice(
      `${name}-1`,
      name,
      [{ port: 8080 }],
      Array.from({ length: endpoints }, (_, j) => ({ addresses: [`10.0.${i}.${j + 1}`] })),
    ),
  );
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'ca', namespace: 'default' },
    data: { 'tls.crt': base64(LEAF_CERT), 'tls.key': base64(LEAF_KEY), 'ca.crt': base64(CA_CERT) },
  };
  const stores = buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', ingresses],
      ['services', names.map((name) => service(name, [{ port: 80, targetPort: 8080 }]))],
      ['endpointslices', slices],
      ['secrets', [secret]],
    ]),
    config.ignoreFields,
  );
  return createRenderer(config, routingViews)({ stores });
}

const render = (endpoints: number) => renderOutput(endpoints).files;

describe('planning an endpoint added to backends with settings', () => {
  it('adds it with the options of its line through the Runtime API, for every row but cookie affinity', () => {
    const without = (files: ReturnType<typeof render>, backend: string) => ({
      ...files,
      config: files.config.replace(new RegExp(`^backend ${backend}\\n[\\s\\S]*?(?=^backend |(?![\\s\\S]))`, 'm'), ''),
    });
    // Cookie affinity alone reloads: the others are planned with the sticky backend left out.
    const before = without(render(1), 'default_sticky_80');
    const after = without(render(2), 'default_sticky_80');
    const plan = planDeployment(before, after);
    if (plan.kind !== 'runtime') throw new Error(`expected a runtime plan, got ${JSON.stringify(plan)}`);
    const added = plan.operations.flatMap((operation) => (operation.type === 'addServer' ? [`${operation.backend} ${operation.server.options.join(' ')}`] : []));
    expect(added).to.deep.equal([
      // `sni str("")` as HAProxy's parser reads it: no SNI on any version (the template says why).
      'default_h2_80 check ssl verify none sni str() alpn h2',
      'default_h2c_80 check proto h2 check-proto h2',
      'default_hashed_80 check',
      'default_limited_80 check inter 500 maxconn 5',
      'default_verified_80 check ssl verify required ca-file general/default_ca__ca.pem sni str()',
    ]);
  });

  it('reloads for an endpoint added to a backend with cookie affinity, saying why', () => {
    const plan = planDeployment(render(1), render(2));
    expect(plan).to.deep.equal({
      kind: 'reload',
      reason: 'backend default_sticky_80: server srv-10.0.5.2-8080 added but the backend sets a cookie (add server cannot give the server one)',
    });
  });
});

describe('the lines of backend settings', () => {
  it('name the Ingress whose annotations asked for them, so a line HAProxy refuses leads back to its annotations', () => {
    const output = renderOutput(1);
    const lines = output.files.config.split('\n');
    const origins = output.origins.get('haproxy.cfg')!;
    const objectsOf = (pattern: RegExp) => origins[lines.findIndex((line) => pattern.test(line))]!.objects;
    expect(objectsOf(/^  timeout server 9000$/)).to.deep.equal(['Ingress default/hashed']);
    expect(objectsOf(/^  balance hdr\(x-user\)$/)).to.deep.equal(['Ingress default/hashed']);
    expect(objectsOf(/^  cookie SRVID /)).to.deep.equal(['Ingress default/sticky']);
    // A server line shows the endpoint and the settings: both objects are named.
    expect(objectsOf(/^  server srv-10\.0\.1\.1-8080 .* maxconn 5$/)).to.have.members(['EndpointSlice default/limited-1', 'Ingress default/limited']);
  });
});
