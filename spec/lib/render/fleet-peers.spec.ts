import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { checkConfig } from '../../../lib/haproxy/check.ts';
import { Validator } from '../../../lib/haproxy/validator.ts';
import { selectionFor } from '../../../lib/kube/select.ts';
import type { KubeObject, Peer } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { writeRenderedFiles } from '../../../lib/render/write-files.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { endpointSlice, ingress, path, rule, service } from '../ingress/fixtures.ts';

/** The shipped template's peers section: every HAProxy of the fleet, the rate limits' stick tables shared through it. */
describe('the shipped peers section', function () {
  this.timeout(30_000);
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  const config = loaded.config;
  const renderer = createRenderer(config, routingViews);
  const limited = ingress('web', {
    annotations: { 'haproxy.org/rate-limit-requests': '10', 'nginx.ingress.kubernetes.io/limit-connections': '5' },
    rules: [rule('web.example.com', path('/', 'web', 80))],
  });
  const objects: KubeObject[] = [limited, service('web', [{ port: 80, targetPort: 8080 }]), endpointSlice('web-1', 'web', [{ port: 8080 }], [{ addresses: ['10.1.0.1'] }])];
  const render = (peers?: readonly Peer[]) => {
    const byResource = new Map<string, KubeObject[]>();
    for (const resource of config.watchedResources) byResource.set(resource.name, objects.filter(selectionFor(resource)));
    return renderer({ stores: buildStores(config.watchedResources, byResource, config.ignoreFields), ...(peers ? { peers } : {}) });
  };
  const fleet: readonly Peer[] = [
    { name: 'haproxy-0', address: '10.0.0.7' },
    { name: 'haproxy-1', address: '10.0.0.8' },
    { name: 'haproxy-2', address: 'fd00::9' },
  ];

  it('lists every member at templateValues.peerPort, and the rate and connection limits count through it', () => {
    const { config: text } = render(fleet).files;
    expect(text).to.include('\npeers fleet\n  peer haproxy-0 10.0.0.7:10000\n  peer haproxy-1 10.0.0.8:10000\n  peer haproxy-2 fd00::9:10000\n');
    expect(text).to.match(/^ {2}stick-table type string len 300 size 100k expire 1000ms store http_req_rate\(1000ms\),conn_cur peers fleet$/m);
    // The choices' request counts stay each instance's own: their interleaving is exact per instance.
    expect(text).to.not.match(/store gpc0 peers/);
  });

  it('has no peers section when nothing shares counters (a HAProxy alone, a controller not leading)', () => {
    for (const text of [render().files.config, render([]).files.config]) {
      expect(text).to.not.match(/^peers /m);
      expect(text).to.not.include('peers fleet');
    }
  });

  it('is valid to haproxy -c as the controller validates it, and as each member reads it (-L its name)', async () => {
    const output = render(fleet);
    const verdict = await new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane }).validate({ hash: 'fleet', files: output.files, origins: output.origins });
    expect(verdict).to.deep.equal({ status: 'valid' });
    const dir = await mkdtemp(join(tmpdir(), 'fleet-peers-'));
    try {
      const rebased = output.files.config.replace(/default-path origin \S+/, `default-path origin ${dir}`).replaceAll(`${config.dataplane.baseDir}/`, `${dir}/`);
      const configFile = await writeRenderedFiles(dir, { ...output.files, config: rebased }, config.dataplane);
      for (const localPeer of fleet.map((peer) => peer.name)) {
        const result = await checkConfig(configFile, undefined, { allowDirectives: config.allowDirectives, localPeer });
        expect(result.valid, result.output).to.equal(true);
        expect(result.output).to.not.include('Removing incomplete section');
      }
      // A name the section does not list: HAProxy drops the section (a warning), which -L in validation avoids.
      expect((await checkConfig(configFile, undefined, { allowDirectives: config.allowDirectives, localPeer: 'elsewhere' })).output).to.include("Removing incomplete section 'peers fleet'");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
