import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { configurationToCheck } from '../../../lib/haproxy/check.ts';
import { checkSmallConfiguration } from '../../../lib/webhook/haproxy-check.ts';
import { renderWorld } from '../../../lib/webhook/small-world.ts';

/** The webhook's `haproxy -c`, with the real HAProxy: the guard first, an empty environment, nothing left behind. */

function configWith(haproxyConfig: string, allow = ''): ControllerConfig {
  const loaded = loadControllerConfig(`
watchedResources:
  things: { apiVersion: example.com/v1, kind: Thing, validationWebhook: true }
templates:
  haproxyConfig: |
${haproxyConfig.replace(/^/gm, '    ')}
${allow}`);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

const thing = (address: string): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { namespace: 'default', name: 'web' }, spec: { address } });
const template = `global
  default-path origin {{paths.base}}
defaults
  mode http
  timeout connect 5s
  timeout client 5s
  timeout server 5s
backend web
{{#resources.things}}
  server {{metadata.name}} {{spec.address}}
{{/resources.things}}`;

describe('checkSmallConfiguration', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'webhook-check-spec-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const check = (config: ControllerConfig, object: KubeObject) =>
    checkSmallConfiguration((baseDir) => renderWorld(config, new Map([['things', [object]]]), baseDir), { allowDirectives: config.allowDirectives, dirs: config.dataplane, tmpRoot: root });

  it('accepts what HAProxy accepts, and leaves no file behind', async () => {
    expect(await check(configWith(template), thing('127.0.0.1:8080'))).to.deep.equal({ valid: true });
    expect(await readdir(root)).to.deep.equal([]);
  });

  it('refuses what HAProxy refuses, naming the rendered line, its template line and the object', async () => {
    const verdict = await check(configWith(template), thing('127.0.0.1:99999'));
    expect(verdict.valid).to.equal(false);
    const message = (verdict as { message: string }).message;
    expect(message).to.equal(
      ["haproxy.cfg:9: 'server web/web' : invalid port '99999'", '  rendered: "server web 127.0.0.1:99999"', '  from templates.haproxyConfig line 10, values of Thing default/web'].join(
        '\n',
      ),
    );
    expect(message).to.not.include(root);
  });

  it('refuses a directive the guard refuses without running HAProxy', async () => {
    const verdict = await check(configWith(`global\n  lua-load {{spec.address}}\n{{#resources.things}}{{/resources.things}}`), thing('x.lua'));
    expect(verdict.valid).to.equal(false);
    expect((verdict as { message: string }).message).to.match(/^haproxy\.cfg:2: lua-load loads and runs Lua code: "lua-load"; allowDirectives does not allow it\n/);
  });

  it("runs HAProxy with an empty environment: none of the controller's variables reach the configuration", async () => {
    process.env['WEBHOOK_SPEC_PORT'] = '8080';
    try {
      // Allowed here, so that HAProxy runs and expands it: to nothing.
      const config = { ...configWith(`${template}\nfrontend f\n  bind 127.0.0.1:"\${WEBHOOK_SPEC_PORT}"\n  default_backend web`), allowDirectives: ['environment-variables' as const] };
      const verdict = await check(config, thing('127.0.0.1:8080'));
      expect(verdict.valid).to.equal(false);
      expect((verdict as { message: string }).message).to.match(/^haproxy\.cfg:11: 'bind' : missing port specification in '127\.0\.0\.1:'\n/);
    } finally {
      delete process.env['WEBHOOK_SPEC_PORT'];
    }
  });

  it("spares HAProxy the system's CA store, after the last line, only where the configuration leaves the httpclient alone", () => {
    const spared = 'global\n  httpclient.ssl.verify none\n';
    expect(configurationToCheck('defaults\n  mode http\n')).to.equal(`defaults\n  mode http\n${spared}`);
    expect(configurationToCheck('defaults\n  mode http')).to.equal(`defaults\n  mode http\n${spared}`);
    const own = 'global\n  httpclient.ssl.verify required\ndefaults\n  mode http\n';
    expect(configurationToCheck(own)).to.equal(own);
    const resolvers = 'global\n\thttpclient.resolvers.disabled on\n';
    expect(configurationToCheck(resolvers)).to.equal(resolvers);
  });

  it('fails loudly, judging nothing, without HAProxy', async () => {
    const failure = await checkSmallConfiguration((baseDir) => renderWorld(configWith(template), new Map([['things', [thing('127.0.0.1:1')]]]), baseDir), {
      allowDirectives: [],
      dirs: { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' },
      binary: '/nonexistent/haproxy',
      tmpRoot: root,
    }).catch((error: unknown) => error);
    expect(failure).to.be.an('error').with.property('message').that.includes('/nonexistent/haproxy not found');
  });
});
