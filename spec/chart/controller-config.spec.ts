import { expect } from 'chai';
import { lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ControllerConfig } from '../../lib/config/types.ts';
import { runValidationTests } from '../../lib/validation/run-tests.ts';
import { chartDirectory, helm, projectRoot, releaseName, releaseNamespace, renderChart, renderedChart, valueSets } from './helm.ts';
import { configMapData } from './manifests.ts';

/** The configuration the chart deploys, loaded by the controller's own loader; fails with its errors. */
async function deployedConfig(values: object): Promise<{ text: string; config: ControllerConfig }> {
  const chart = await renderChart(values);
  const text = configMapData(chart.one('ConfigMap', 'haproxy-config'), 'config.yaml');
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(`the chart's configuration does not load:\n${loaded.errors.join('\n')}`);
  return { text, config: loaded.config };
}

async function expectValidationTestsPass(config: ControllerConfig): Promise<void> {
  expect(config.validationTests.length).to.be.greaterThan(0);
  const results = await runValidationTests(config);
  const failed = results.filter((result) => !result.passed).map((r) => `${r.test} ${r.assertion}: ${r.detail}`);
  expect(failed).to.deep.equal([]);
  expect(results.length).to.be.greaterThan(config.validationTests.length);
}

describe("the chart's controller configuration", function () {
  // validationTests run haproxy -c once per test.
  this.timeout(60_000);

  it('keeps templates/config.yaml once: chart/files/config.yaml is a link to it, and helm package carries its bytes', async () => {
    // A link rather than a copy: helm follows links in a chart directory (helm's internal/sympath/walk.go),
    // so `helm template chart/` from a checkout and the packaged chart both carry the one file.
    const copy = join(chartDirectory, 'files', 'config.yaml');
    expect((await lstat(copy)).isSymbolicLink(), 'chart/files/config.yaml must be a symbolic link, not a copy').to.equal(true);
    expect(await readlink(copy)).to.equal('../../templates/config.yaml');
    const shipped = await readFile(join(projectRoot, 'templates', 'config.yaml'), 'utf8');
    const out = await mkdtemp(join(tmpdir(), 'chart-package-'));
    try {
      const packaged = await helm(['package', chartDirectory, '--destination', out]);
      expect(packaged.code, packaged.stderr).to.equal(0);
      const [archive] = await readdir(out);
      const rendered = await helm(['template', releaseName, join(out, archive!), '--namespace', releaseNamespace]);
      expect(rendered.code, rendered.stderr).to.equal(0);
      const configMap = renderedChart(rendered.stdout).one('ConfigMap', 'haproxy-config');
      expect(configMapData(configMap, 'config.yaml')).to.equal(shipped);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('loads by default and its validationTests pass', async () => {
    const { config } = await deployedConfig(valueSets.defaults);
    expect(config.ingress.className).to.equal('haproxy');
    await expectValidationTestsPass(config);
  });

  it('loads extended by values, with the extension applied, and its validationTests still pass', async () => {
    const { config } = await deployedConfig(valueSets.extendedConfig);
    expect(config.templateValues['httpPort']).to.equal(8080);
    expect(config.templateValues['runtimeSocket']).to.equal('/var/run/haproxy/admin.sock');
    expect(config.podSelector.matchLabels).to.deep.equal({ 'app.kubernetes.io/name': 'haproxy', 'example.com/fleet': 'edge' });
    expect(config.watchedResources.map((w) => w.name)).to.have.members([
      'ingresses',
      'services',
      'endpointslices',
      'secrets',
      'authsecrets',
      'gatewayclasses',
      'gateways',
      'listenersets',
      'httproutes',
      'grpcroutes',
      'tlsroutes',
      'tcproutes',
      'backendtlspolicies',
      'referencegrants',
      'namespaces',
      'configmaps',
    ]);
    await expectValidationTestsPass(config);
  });

  it('loads with TLS to the Data Plane API', async () => {
    const { config } = await deployedConfig(valueSets.dataplaneTls);
    expect(config.dataplane.scheme).to.equal('https');
    expect(config.validationTests.map((t) => t.name)).to.include('empty-cluster');
  });

  it('is replaced whole by controller.config.replace, as written', async () => {
    const shipped = await readFile(join(projectRoot, 'templates', 'config.yaml'), 'utf8');
    const replacement = shipped.replace('className: haproxy', 'className: edge');
    const { text, config } = await deployedConfig({ controller: { config: { replace: replacement } } });
    expect(text).to.equal(replacement);
    expect(config.ingress.className).to.equal('edge');
  });
});
