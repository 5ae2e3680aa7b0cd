import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { expect } from 'chai';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice } from '../support/manifest-builders.ts';
import { atRate } from '../support/pace.ts';
import type { Deployed } from '../support/traffic.ts';

/**
 * Local mode end to end: the shipped configuration, a real HAProxy, real
 * HTTP through it to real backends on loopback. Reloads are counted from
 * HAProxy's master socket, never from the controller's own word.
 */

type Rendered = Extract<Outcome, { type: 'rendered' }>;

describe('local mode end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  /** The shop: / to web (named targetPort), /api and /health to api (numeric), each with one backend. */
  async function shop(backends = 4): Promise<LocalHarness> {
    const started = await LocalHarness.start({ manifests: {}, backends });
    const [web, api] = started.backends as [number, number];
    const mark = started.mark();
    await started.write(
      'shop.yaml',
      docs(
        ingress('shop', 'shop.example.com', [
          ['/', 'Prefix', 'web', { name: 'http' }],
          ['/api', 'Prefix', 'api', { number: 8080 }],
          ['/health', 'Exact', 'api', { number: 8080 }],
        ]),
        service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }]),
        service('api', [{ name: 'rest', port: 8080, targetPort: api }]),
        slice('api-1', 'api', 'rest', api),
      ),
    );
    await started.write('web-1.yaml', slice('web-1', 'web', 'http', web));
    await started.next(mark, 'deployed');
    await started.until('shop.example.com', '/', [web]);
    return started;
  }

  it('routes Exact and Prefix paths to named and numeric service ports', async () => {
    harness = await shop();
    const [web, api] = harness.backends as [number, number];
    const answer = async (host: string, path: string) => {
      const response = await harness!.get(host, path);
      return response.status === 200 ? Number(/^backend (\d+)/.exec(response.body)?.[1]) : response.status;
    };
    expect(await answer('shop.example.com', '/')).to.equal(web);
    expect(await answer('shop.example.com', '/api')).to.equal(api);
    expect(await answer('shop.example.com', '/api/orders')).to.equal(api);
    // Prefix matching is by path element: /apix is not under /api.
    expect(await answer('shop.example.com', '/apix')).to.equal(web);
    expect(await answer('shop.example.com', '/health')).to.equal(api);
    // Exact means exact: /health/deep falls back to the / prefix.
    expect(await answer('shop.example.com', '/health/deep')).to.equal(web);
    expect(await answer('SHOP.example.com:18080', '/api')).to.equal(api);
    expect(await answer('other.example.com', '/')).to.equal(404);
  });

  it('moves traffic when endpoints are added, removed or not ready, with zero reloads', async () => {
    harness = await shop();
    const [web, , second, third] = harness.backends as [number, number, number, number];
    const reloads = await harness.reloads();
    const deployedModes: string[] = [];
    const step = async (change: () => Promise<void>, expected: number[]) => {
      const mark = harness!.mark();
      await change();
      deployedModes.push((await harness!.next(mark, 'deployed')).result.mode);
      await harness!.until('shop.example.com', '/', expected);
    };
    await step(() => harness!.write('web-2.yaml', slice('web-2', 'web', 'http', second)), [web, second]);
    await step(() => harness!.write('web-3.yaml', slice('web-3', 'web', 'http', third)), [web, second, third]);
    await step(() => harness!.write('web-1.yaml', slice('web-1', 'web', 'http', web, false)), [second, third]);
    await step(() => harness!.remove('web-2.yaml'), [third]);
    expect(deployedModes).to.deep.equal(['runtime', 'runtime', 'runtime', 'runtime']);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('adds a path to an existing host and backend without a reload', async () => {
    harness = await shop();
    const [web, api] = harness.backends as [number, number];
    const reloads = await harness.reloads();
    expect(await harness.answering('shop.example.com', '/orders')).to.deep.equal([web]);
    const mark = harness.mark();
    const text = await readFile(join(harness.manifestDir, 'shop.yaml'), 'utf8');
    await harness.write(
      'shop.yaml',
      text.replace(
        '          - { path: /health,',
        '          - { path: /orders, pathType: Prefix, backend: { service: { name: api, port: { number: 8080 } } } }\n          - { path: /health,',
      ),
    );
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('runtime');
    await harness.until('shop.example.com', '/orders/42', [api]);
    expect(await harness.reloads()).to.equal(reloads);
  });

  it('needs exactly one reload for a new Ingress with a new Service', async () => {
    harness = await shop();
    const [, , blog] = harness.backends as [number, number, number];
    const reloads = await harness.reloads();
    const mark = harness.mark();
    await harness.write(
      'blog.yaml',
      docs(ingress('blog', 'blog.example.com', [['/', 'Prefix', 'blog', { number: 80 }]]), service('blog', [{ port: 80, targetPort: blog }]), slice('blog-1', 'blog', undefined, blog)),
    );
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.result.mode).to.equal('reload');
    expect(deployed.result.reloadReason).to.match(/backend default_blog_80/);
    await harness.until('blog.example.com', '/', [blog]);
    expect(await harness.reloads()).to.equal(reloads + 1);
  });

  it('keeps serving through bad manifests, invalid objects, template errors and rejected configs, naming each culprit', async () => {
    harness = await shop();
    const [web] = harness.backends as [number];
    const reloads = await harness.reloads();
    const stillServing = () => harness!.until('shop.example.com', '/', [web]);

    let mark = harness.mark();
    await harness.write('broken.yaml', 'apiVersion: v1\nkind: [Service\n');
    expect((await harness.next(mark, 'resourceError')).error).to.match(/^broken\.yaml: /);
    await stillServing();

    // An HTTPRoute written at v1beta1 where the shipped configuration watches v1: not read, and the log says
    // which object, the version it has and the one to write.
    const lines = harness.lines.length;
    await harness.write('route.yaml', 'apiVersion: gateway.networking.k8s.io/v1beta1\nkind: HTTPRoute\nmetadata: {name: r, namespace: other}\nspec: {}\n');
    expect(
      await harness.line(
        lines,
        /route\.yaml#1: HTTPRoute other\/r is gateway\.networking\.k8s\.io\/v1beta1, but watchedResources\.httproutes reads gateway\.networking\.k8s\.io\/v1: not read \(write it as gateway\.networking\.k8s\.io\/v1\)/,
      ),
    ).to.match(/"level":50/);
    await harness.remove('route.yaml');

    mark = harness.mark();
    await harness.write('evil.yaml', ingress('evil', 'evil.example.com # x', [['/', 'Prefix', 'web', { name: 'http' }]]));
    const rendered = await harness.next(mark, 'rendered');
    expect(rendered.excluded.map((p) => `${p.object} ${p.field}`)).to.deep.equal(['Ingress default/evil spec.rules[0].host']);
    await stillServing();
    await harness.remove('evil.yaml');
    expect(await harness.reloads()).to.equal(reloads);

    // The watched configuration file: a template that does not parse is rejected before anything runs.
    await harness.stop();
    harness = await LocalHarness.start({ manifests: {}, backends: 1, watchedConfig: true });
    const only = harness.backends[0]!;
    mark = harness.mark();
    await harness.write(
      'shop.yaml',
      docs(ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', { number: 80 }]]), service('web', [{ port: 80, targetPort: only }]), slice('web-1', 'web', undefined, only)),
    );
    await harness.next(mark, 'deployed');
    await harness.until('shop.example.com', '/', [only]);
    const configReloads = await harness.reloads();
    const shipped = await readFile(harness.configPath, 'utf8');

    mark = harness.mark();
    // The routing view under either name: `ingress` is its old one.
    await writeFile(
      harness.configPath,
      shipped.replace(/^ {4}\{\{#(?:routes|ingress)\.backends\}\}\n/m, (line) => `${line}    {{#servers}}\n`),
    );
    const rejected = await harness.next(mark, 'configRejected');
    expect(rejected.errors.join('\n')).to.match(/templates\.haproxyConfig: line \d+: unclosed section "servers"/);
    await harness.until('shop.example.com', '/', [only]);

    // A template that renders a configuration haproxy -c refuses: the error points at the line and its template.
    mark = harness.mark();
    await writeFile(harness.configPath, shipped.replace('      http-request set-var(txn.path) path', '      http-request set-var(txn.path) path\n      bnd :1'));
    const invalid = await harness.next(mark, 'validationFailed');
    expect(invalid.error).to.match(/^haproxy\.cfg:\d+: .*'bnd'/m);
    expect(invalid.error).to.include('rendered: "bnd :1"');
    expect(invalid.error).to.match(/from templates\.haproxyConfig line \d+/);
    await harness.until('shop.example.com', '/', [only]);
    expect(await harness.reloads()).to.equal(configReloads);
  });

  it('keeps watching when the manifest folder is removed and made again', async () => {
    harness = await shop();
    const [web, , other] = harness.backends as [number, number, number];
    const shopText = await readFile(join(harness.manifestDir, 'shop.yaml'), 'utf8');
    const mark = harness.mark();
    await rm(harness.manifestDir, { recursive: true });
    const failed = await harness.log.waitFor(
      mark,
      (outcome): outcome is Extract<Outcome, { type: 'resourceError' }> => outcome.type === 'resourceError' && outcome.error.startsWith('manifests could not be read'),
      'the missing folder reported',
      5_000,
    );
    expect(failed.error).to.contain(harness.manifestDir);
    await harness.until('shop.example.com', '/', [web]);
    await mkdir(harness.manifestDir);
    await harness.write('shop.yaml', shopText);
    await harness.write('web-1.yaml', slice('web-1', 'web', 'http', other));
    await harness.until('shop.example.com', '/', [other]);
  });

  it('causes zero reloads when the controller restarts on unchanged manifests', async () => {
    const first = await shop();
    const [web] = first.backends as [number];
    const reloads = await first.reloads();
    await first.stop({ keepHaproxy: true, keepBackends: true });
    const manifests = {
      'shop.yaml': await readFile(join(first.manifestDir, 'shop.yaml'), 'utf8'),
      'web-1.yaml': await readFile(join(first.manifestDir, 'web-1.yaml'), 'utf8'),
    };
    try {
      harness = await LocalHarness.start({ manifests, backends: 0, workDir: first.workDir, ports: first.ports }, first.backends);
      const deployed = await harness.next(0, 'deployed');
      expect(deployed.result.mode).to.equal('unchanged');
      expect(harness.lines.join('')).to.include('attached to the HAProxy already running');
      await harness.until('shop.example.com', '/', [web]);
      expect(await harness.reloads()).to.equal(reloads);
    } finally {
      await first.stopBackends();
    }
  });

  it('folds 100 edits in 10 s into at most one reload per minimum deployment interval, ending on the last edit', async () => {
    harness = await shop();
    const [, , churn] = harness.backends as [number, number, number];
    const servicePorts = Array.from({ length: 100 }, (_, i) => ({ name: `p${i}`, port: 1000 + i, targetPort: churn }));
    let mark = harness.mark();
    // No Ingress uses the service yet: it renders the same configuration, so nothing deploys.
    const slicePorts = servicePorts.map((p) => `{ name: ${p.name}, port: ${churn} }`).join(', ');
    const churnSlice = slice('churn-1', 'churn', undefined, churn).replace(/^ports: .*$/m, `ports: [ ${slicePorts} ]`);
    await harness.write('churn-svc.yaml', docs(service('churn', servicePorts), churnSlice));
    await harness.next(mark, 'rendered');
    const reloads = await harness.reloads();
    mark = harness.mark();
    // The user's pace: an edit every 100 ms, each routing /churn to another service port (a backend of its own: a reload).
    await atRate(100, 100, (i) => harness!.write('churn.yaml', ingress('churn', 'churn.example.com', [['/', 'Prefix', 'churn', { number: 1000 + i }]])));
    // The last edit is what ends up served.
    const last = await harness.log.waitFor(mark, (o): o is Rendered => o.type === 'rendered' && o.files.config.includes('backend default_churn_1099'), 'the last edit rendered');
    await harness.log.waitFor(mark, (o): o is Deployed => o.type === 'deployed' && o.hash === last.hash, 'the last edit deployed');
    const config = await readFile(join(harness.workDir, 'haproxy.cfg'), 'utf8');
    expect(config).to.include('backend default_churn_1099');
    expect(config).to.not.include('backend default_churn_1098');
    await harness.until('churn.example.com', '/', [churn]);
    // Folded: deployments of changes at least the minimum deployment interval (2 s) apart, a reload at most each.
    const deployments = harness.log.entries.slice(mark).filter(({ outcome }) => outcome.type === 'deploying' && outcome.reason === 'change');
    const gaps = deployments.slice(1).map((entry, i) => entry.at - deployments[i]!.at);
    expect(
      gaps.filter((gap) => gap < 1_995),
      `gaps ${gaps.join(', ')} ms`,
    ).to.deep.equal([]);
    const reloadsDuringChurn = (await harness.reloads()) - reloads;
    expect(reloadsDuringChurn).to.be.at.least(1);
    expect(reloadsDuringChurn).to.be.at.most(deployments.length);
  });
});
