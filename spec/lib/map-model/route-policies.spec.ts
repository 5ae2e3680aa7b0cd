import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import type { RouteSettings } from '../../../lib/routing/settings.ts';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { policyValue } from '../../../lib/map-model/policy-slots.ts';
import { routePolicy } from '../../../lib/map-model/route-policies.ts';
import { buildMapModel, MapModelCache } from '../../../lib/map-model/build-model.ts';
import { ModelSource } from '../../../lib/map-model/model-source.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { endpointSlice, ingress, path, rule, service, sources } from '../ingress/fixtures.ts';

/**
 * Route policies: one key per distinct content of route settings, carried in
 * the path maps next to the backend, so a route with settings some served
 * route already has costs map lines and no configuration line.
 */

const web = service('web', [{ name: 'http', port: 80, targetPort: 8080 }]);
const webSlice = endpointSlice('web-abc', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }]);
const redirect301 = { 'haproxy.org/ssl-redirect': 'true', 'haproxy.org/ssl-redirect-code': '301' };

function routed(name: string, host: string, annotations?: Record<string, string>, namespace = 'default'): KubeObject {
  return ingress(name, { namespace, ...(annotations ? { annotations } : {}), rules: [rule(host, path('/', 'web', 80))] });
}

const build = (ingresses: readonly KubeObject[], cache?: MapModelCache) => buildMapModel(sources({ services: [web], slices: [webSlice], ingresses }), cache);
const lines = (model: ReturnType<typeof build>) => model.prefixRoutes.map((route) => `${route.key} ${route.backend}${route.policy ? `:${route.policy}` : ''}`);

describe('route policies', () => {
  it('gives equal settings one key, whichever Ingress and spelling asks for them, and routes without settings none', () => {
    const model = build([
      routed('a', 'a.example.com', redirect301),
      routed('b', 'b.example.com', { 'haproxy.org/ssl-redirect-code': '301', 'haproxy.org/ssl-redirect': 'true' }),
      // ingress-nginx's force-ssl-redirect is a 308.
      routed('c', 'c.example.com', { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' }),
      routed('d', 'd.example.com', { 'haproxy.org/ssl-redirect': 'true', 'haproxy.org/ssl-redirect-code': '308' }),
      routed('plain', 'plain.example.com'),
      routed('unrelated', 'unrelated.example.com', { 'example.com/owner': 'team-a' }),
    ]);
    expect(model.policies.map((policy) => policy.settings)).to.have.deep.members([{ sslRedirect: { code: 301 } }, { sslRedirect: { code: 308 } }]);
    const [k301, k308] = [301, 308].map((code) => model.policies.find((policy) => policy.settings.sslRedirect?.code === code)!.key);
    expect(k301).to.match(/^p[0-9a-f]{16}$/);
    expect(lines(model)).to.deep.equal([
      'unrelated.example.com/ default_web_80',
      'plain.example.com/ default_web_80',
      `a.example.com/ default_web_80:${k301}`,
      `b.example.com/ default_web_80:${k301}`,
      `c.example.com/ default_web_80:${k308}`,
      `d.example.com/ default_web_80:${k308}`,
    ]);
    expect(model.prefixRoutes.find((route) => route.key === 'a.example.com/')!.settings).to.deep.equal({ sslRedirect: { code: 301 } });
    expect(model.prefixRoutes.find((route) => route.key === 'plain.example.com/')!.settings).to.equal(undefined);
  });

  it('derives the key from the content alone: field order and the path of the route do not move it, the content does', () => {
    const source = new ModelSource('Ingress', routed('x', 'x.example.com'), 'metadata.annotations');
    const one: RouteSettings = { allow: ['10.0.0.0/8'], sslRedirect: { code: 301 } };
    const same: RouteSettings = { sslRedirect: { code: 301 }, allow: ['10.0.0.0/8'] };
    expect(routePolicy(one, '/a', source)!.key).to.equal(routePolicy(same, '/b', source)!.key);
    expect(routePolicy({ ...one, allow: ['10.0.0.0/9'] }, '/a', source)!.key).to.not.equal(routePolicy(one, '/a', source)!.key);
    expect(routePolicy({}, '/a', source)).to.equal(undefined);
    // A rewrite of the route's own path makes the path part of the content.
    const prefix: RouteSettings = { rewrite: { kind: 'prefix', replacement: '/' } };
    expect(routePolicy(prefix, '/a', source)!.key).to.not.equal(routePolicy(prefix, '/b', source)!.key);
    expect(routePolicy(prefix, '/a', source)!.rewrites).to.deep.equal([
      { pattern: '^/a$', replacement: '/' },
      { pattern: '^/a(/.*)$', replacement: '\\1' },
    ]);
    expect(routePolicy({ rewrite: { kind: 'prefix', replacement: '/new/' } }, '/a.b/', source)!.rewrites).to.deep.equal([{ pattern: '^/a\\.b(/.*)?$', replacement: '/new\\1' }]);
  });

  it("gives external authentication the action's arguments, '-' for one not set, and loads the action only while a policy asks for it", () => {
    const source = new ModelSource('Ingress', routed('x', 'x.example.com'), 'metadata.annotations');
    const auth: RouteSettings['externalAuth'] = { url: 'http://auth.example.com/check', requestRedirect: '$request_uri', responseHeaders: [], alwaysSetCookie: false };
    expect(routePolicy({ externalAuth: auth }, '/', source)!.externalAuth).to.deep.equal({
      url: 'http://auth.example.com/check',
      method: '-',
      signin: '-',
      requestRedirect: '$request_uri',
      headers: '-',
      alwaysSetCookie: false,
    });
    const full = { ...auth, method: 'POST' as const, signin: 'https://auth.example.com/start?rd=$request_uri', responseHeaders: ['X-User', 'X-Email'], alwaysSetCookie: true };
    expect(routePolicy({ externalAuth: full }, '/', source)!.externalAuth).to.deep.include({ method: 'POST', signin: full.signin, headers: 'X-User,X-Email', alwaysSetCookie: true });
    const annotated = { 'nginx.ingress.kubernetes.io/auth-url': 'http://auth.example.com/check' };
    expect(build([routed('a', 'a.example.com', annotated)]).externalAuth).to.equal(true);
    expect(build([routed('a', 'a.example.com', redirect301)]).externalAuth).to.equal(false);
  });

  it("gives Gateway API ExternalAuth the gateway-auth action's arguments: the auth Service port's backend, '-' for a list or path not set", () => {
    const source = new ModelSource('Ingress', routed('x', 'x.example.com'), 'metadata.annotations');
    const auth: RouteSettings['gatewayExternalAuth'] = { namespace: 'apps', service: 'auth', port: 80, path: '', allowedHeaders: [], allowedResponseHeaders: [] };
    expect(routePolicy({ gatewayExternalAuth: auth }, '/', source)!.gatewayExternalAuth).to.deep.equal({
      backend: 'apps_auth_80',
      namespace: 'apps',
      service: 'auth',
      port: 80,
      path: '-',
      requestHeaders: '-',
      responseHeaders: '-',
      refused: false,
    });
    const full = { ...auth, path: '/check', allowedHeaders: ['cookie', 'x-id'], allowedResponseHeaders: ['x-user'], refused: 'no grant' };
    expect(routePolicy({ gatewayExternalAuth: full }, '/', source)!.gatewayExternalAuth).to.deep.include({
      path: '/check',
      requestHeaders: 'cookie,x-id',
      responseHeaders: 'x-user',
      refused: true,
    });
  });

  it('lists a policy once while any served route uses it, and keeps the list when a route with an existing policy comes or goes', () => {
    const cache = new MapModelCache();
    const [a, b] = [routed('a', 'a.example.com', redirect301), routed('b', 'b.example.com', redirect301)];
    const first = build([a], cache);
    expect(first.policies).to.have.length(1);
    const second = build([a, b], cache);
    expect(second.policies).to.equal(first.policies);
    expect(second.prefixRoutes).to.have.length(2);
    // b's policy object stands for a's: the same content.
    const third = build([b], cache);
    expect(third.policies).to.deep.equal(first.policies);
    const fourth = build([routed('b', 'b.example.com')], cache);
    expect(fourth.policies).to.deep.equal([]);
    expect(fourth).to.deep.equal(build([routed('b', 'b.example.com')]));
  });

  it('warns when a route is lost to an older Ingress with other route settings for the same backend', () => {
    const older = ingress('older', { created: '2024-01-01T00:00:00Z', rules: [rule('a.example.com', path('/', 'web', 80))] });
    const newer = ingress('newer', { created: '2024-02-01T00:00:00Z', annotations: redirect301, rules: [rule('a.example.com', path('/', 'web', 80))] });
    const model = build([newer, older]);
    expect(lines(model)).to.deep.equal(['a.example.com/ default_web_80']);
    expect(model.policies).to.deep.equal([]);
    expect(model.warnings.map((warning) => `${warning.object}: ${warning.message}`)).to.deep.equal([
      'Ingress default/newer: route "a.example.com/" not served with its annotations\' route settings: older Ingress default/older serves it with its own',
    ]);
  });

  it('renders a route with an existing policy as map lines only: not one configuration line changes', async () => {
    const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const { config } = loaded;
    const render = createRenderer(config, routingViews);
    const at = (ingresses: readonly KubeObject[]) =>
      render({
        stores: buildStores(
          config.watchedResources,
          new Map([
            ['ingresses', ingresses],
            ['services', [web]],
            ['endpointslices', [webSlice]],
          ]),
          config.ignoreFields,
        ),
      });
    const before = at([routed('a', 'a.example.com', redirect301), routed('plain', 'plain.example.com')]);
    const after = at([routed('a', 'a.example.com', redirect301), routed('plain', 'plain.example.com'), routed('b', 'b.example.com', redirect301), routed('c', 'c.example.com')]);
    expect(after.files.config).to.equal(before.files.config);
    expect(after.files.maps['path-prefix.map']).to.not.equal(before.files.maps['path-prefix.map']);
    const key = /:(p[0-9a-f]{16})$/m.exec(before.files.maps['path-prefix.map']!)![1]!;
    expect(after.files.maps['path-prefix.map']).to.equal(
      `plain.example.com/ default_web_80\na.example.com/ default_web_80:${key}\nb.example.com/ default_web_80:${key}\nc.example.com/ default_web_80\n`,
    );
    // A redirect to HTTPS is one rule per code, the policy's a policies.map line: a policy with another code is a configuration change.
    expect(before.files.config).to.include('  http-request redirect scheme https code 301 if !{ ssl_fc } { var(txn.policy),concat(/r301),map(/etc/haproxy/maps/policies.map) -m found }\n');
    expect(before.files.config).to.not.match(/acl policy_/);
    expect(before.files.maps['policies.map']).to.equal(`${key}/r301 =\n`);
    const other = at([routed('a', 'a.example.com', redirect301), routed('d', 'd.example.com', { 'haproxy.org/ssl-redirect': 'true' })]);
    expect(other.files.config).to.not.equal(before.files.config);
    // A policy of rules of its own (a source list) is a configuration change too.
    const listed = at([routed('a', 'a.example.com', redirect301), routed('e', 'e.example.com', { 'haproxy.org/allow-list': '10.0.0.0/8' })]);
    expect(listed.files.config).to.match(/acl policy_p[0-9a-f]{16} var\(txn\.policy\)/);

    // Header changes are one rule per header slot, their values policies.map lines: a new policy whose slots are served is map lines alone.
    const tenant = (name: string, value: string) => routed(name, `${name}.example.com`, { 'haproxy.org/request-set-header': `X-Tenant ${value}` });
    const one = at([tenant('t1', 'acme'), routed('plain', 'plain.example.com')]);
    const two = at([tenant('t1', 'acme'), routed('plain', 'plain.example.com'), tenant('t2', 'big corp')]);
    expect(two.files.config).to.equal(one.files.config);
    expect(one.files.config).to.not.match(/acl policy_/);
    expect(one.files.config).to.include(
      '  http-request set-header X-Tenant %[var(txn.policy),concat(/qs/X-Tenant/1),map(/etc/haproxy/maps/policies.map),bytes(1),url_dec] if { var(txn.policy),concat(/qs/X-Tenant/1),map(/etc/haproxy/maps/policies.map) -m found }\n',
    );
    expect(two.files.maps['policies.map']!.split('\n').map((line) => line.replace(/^p[0-9a-f]{16}/, '<key>'))).to.have.members([
      '<key>/qs/X-Tenant/1 =acme',
      '<key>/qs/X-Tenant/1 =big%20corp',
      '',
    ]);
    // A new slot (another header name) is a new rule.
    expect(at([tenant('t1', 'acme'), routed('t3', 't3.example.com', { 'haproxy.org/request-set-header': 'X-Team blue' })]).files.config).to.not.equal(one.files.config);
  });

  it('writes a header value into policies.map as "=" and the value percent-encoded but for letters, digits and . _ ~ : / @ = -', () => {
    expect(policyValue('team-5')).to.equal('=team-5');
    expect(policyValue('')).to.equal('=');
    expect(policyValue('a b+c?d%e#f;g"h\\i')).to.equal('=a%20b%2Bc%3Fd%25e%23f%3Bg%22h%5Ci');
    expect(policyValue('-x!*&,')).to.equal('=-x%21%2A%26%2C');
    expect(policyValue('é')).to.equal('=%C3%A9');
  });

  it('gives each header change a slot: its name, what is done, and which change of that name in the policy it is', () => {
    const source = new ModelSource('Ingress', routed('a', 'a.example.com'), 'metadata.annotations');
    const policy = routePolicy(
      {
        requestHeaders: {
          remove: ['x-a', 'x-a'],
          add: [
            { name: 'x-b', value: '1' },
            { name: 'x-b', value: '2' },
          ],
        },
        responseHeaders: { set: [{ name: 'x-c', value: 'v' }] },
      },
      '/',
      source,
    )!;
    expect(policy.ownRules).to.equal(false);
    expect(policy.headerSlots.map((slot) => slot.slot)).to.deep.equal(['qd/x-a/1', 'qa/x-b/1', 'qa/x-b/2', 'ss/x-c/1']);
    expect(policy.lines.map((line) => line.key.slice(policy.key.length))).to.deep.equal(['/qd/x-a/1', '/qa/x-b/1', '/qa/x-b/2', '/ss/x-c/1']);
    expect(routePolicy({ requestHeaders: { remove: ['x-a'] }, upstreamHost: 'a', hsts: { maxAge: 1, includeSubdomains: false, preload: false } }, '/', source)!.ownRules).to.equal(false);
    expect(routePolicy({ requestHeaders: { remove: ['x-a'] }, appRoot: '/app' }, '/', source)!.ownRules).to.equal(true);
  });
});
