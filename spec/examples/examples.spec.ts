import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { annotationsCommand } from '../../lib/cli/annotations-command.ts';
import type { CommandOutput } from '../../lib/cli/output.ts';
import { renderCommand } from '../../lib/cli/render-command.ts';
import { validateCommand } from '../../lib/cli/validate-command.ts';
import { checkConfig } from '../../lib/haproxy/check.ts';

/**
 * Every scenario under examples/ runs here the way its README says to try it:
 * `render` (with the real `haproxy -c`) or `annotations` on the folder, through
 * the command's own function.
 */

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

function captured(): CommandOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

/** `render --manifests FOLDER --out <temp>` (with `--config` when given): exit 0 and what it wrote, which the real haproxy -c accepts. */
async function rendered(manifests: string, config?: string): Promise<{ readonly out: string; readonly stderr: string; readonly file: (name: string) => Promise<string> }> {
  const out = await mkdtemp(join(tmpdir(), 'example-'));
  const output = captured();
  const code = await renderCommand({ manifests, out, config }, output);
  expect(code, output.stderr.join('')).to.equal(0);
  const verdict = await checkConfig(join(out, 'haproxy.cfg'));
  expect(verdict.valid, verdict.output).to.equal(true);
  return { out, stderr: output.stderr.join(''), file: (name) => readFile(join(out, name), 'utf8') };
}

/** Each scenario folder of examples/ and the test below that runs it. */
const scenarios = ['manifests', 'gateway-api', 'ingress-nginx-migration', 'custom-crd'];

describe('the examples (examples/README.md)', () => {
  it('lists every scenario folder in examples/README.md with a README of its own, each run by a test here', async () => {
    const folders = (await readdir(examples, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect([...folders].sort()).to.deep.equal([...scenarios].sort());
    const index = await readFile(join(examples, 'README.md'), 'utf8');
    for (const folder of folders) {
      expect(index, `examples/README.md links ${folder}/`).to.include(`](${folder}/README.md)`);
      expect(await readFile(join(examples, folder, 'README.md'), 'utf8')).to.match(/^# /);
    }
  });

  it('manifests (the shop and the blog, `npm run demo`): the shop by host and path, the blog on any host', async () => {
    const { stderr, file } = await rendered(join(examples, 'manifests'));
    expect(stderr).to.equal('');
    expect(await file('maps/path-prefix.map')).to.equal('shop.example.com/api/ default_api_8080\nshop.example.com/ default_web_80\n*/blog/ default_blog_80\n');
    expect(await file('haproxy.cfg'))
      .to.include('server srv-127.0.0.1-18081 127.0.0.1:18081 check')
      .and.include('server srv-127.0.0.1-18082 127.0.0.1:18082 check');
  });

  it('gateway-api (`npm run demo -- gateway-api`): the HTTPRoute, with one request in ten of /api to the canary', async () => {
    const { stderr, file } = await rendered(join(examples, 'gateway-api'));
    expect(stderr).to.equal('');
    expect(await file('maps/path-exact.map')).to.include('shop.example.com/health default_api_8080\n');
    const config = await file('haproxy.cfg');
    // HAProxy's weights are out of 256: 9 to 1.
    expect(config).to.include('server srv-127.0.0.1-18083 127.0.0.1:18083 check weight 256').and.include('server srv-127.0.0.1-18084 127.0.0.1:18084 check weight 28');
  });

  it('ingress-nginx-migration: the report names the class and what each annotation becomes; with the class switched, every route is served', async () => {
    const folder = join(examples, 'ingress-nginx-migration');
    const output = captured();
    expect(await annotationsCommand({ manifests: folder }, output)).to.equal(0);
    const report = output.stdout.join('').split('\n');
    const notServed =
      '  class     not served: its class is "nginx", and this controller serves class "haproxy" (ingress.className): set spec.ingressClassName: haproxy on it (or ingress.className: "nginx" in the controller configuration) to serve it';
    expect(report.filter((line) => line === notServed)).to.have.length(2);
    expect(report).to.include.members([
      '  honoured  nginx.ingress.kubernetes.io/rewrite-target: "/$2" -> route.rewrite',
      '  honoured  nginx.ingress.kubernetes.io/force-ssl-redirect: "true" -> route.sslRedirect',
      '  honoured  nginx.ingress.kubernetes.io/proxy-body-size: "8m" -> route.bodySizeLimit',
      '  honoured  nginx.ingress.kubernetes.io/enable-cors: "true" -> route.cors',
      '  honoured  nginx.ingress.kubernetes.io/auth-secret: "shop-admins" -> route.basicAuth',
      '  ignored   nginx.ingress.kubernetes.io/ssl-redirect: "true": the Ingress has no TLS section, and ingress-nginx redirects only those: use force-ssl-redirect to redirect without',
      '  auth      Secret default/shop-admins: 1 of 1 users can log in (htpasswd)',
      'Summary: 2 Ingresses (2 not of the class served, 0 left out by their annotations), by annotation',
    ]);
    // Rendered as they are, nothing is served and both are named; the README's sed line switches the class.
    const before = await rendered(folder);
    expect(before.stderr).to.include('warning Ingress default/shop: not served: its class is "nginx"').and.include('warning Ingress default/shop-admin: not served');
    expect(await before.file('maps/host.map')).to.equal('');
    const switched = join(await mkdtemp(join(tmpdir(), 'migrated-')), 'manifests');
    await mkdir(switched);
    const manifests = await readFile(join(folder, 'shop.yaml'), 'utf8');
    await writeFile(join(switched, 'shop.yaml'), manifests.replaceAll('ingressClassName: nginx', 'ingressClassName: haproxy'));
    const after = await rendered(switched);
    expect(after.stderr).to.equal('');
    expect(await after.file('maps/host.map')).to.equal('shop.example.com shop.example.com\n');
    const config = await after.file('haproxy.cfg');
    expect(config).to.include('http-request auth realm "Shop admin" if').and.include('deny_status 413').and.include('redirect scheme https code 308');
    const cleared = captured();
    expect(await annotationsCommand({ manifests: switched }, cleared)).to.equal(0);
    expect(cleared.stdout.join('')).to.include('Summary: 2 Ingresses (0 not of the class served, 0 left out by their annotations)');
    expect(cleared.stdout.join('')).to.not.include('not served');
  });

  it('custom-crd: a configuration of its own turns Redirect objects into redirects, the broken one left out alone', async () => {
    const folder = join(examples, 'custom-crd');
    const { stderr, file } = await rendered(join(folder, 'manifests'), join(folder, 'config.yaml'));
    expect(stderr).to.equal('excluded Redirect default/broken: spec.host: value contains " " (templates.haproxyConfig: line 27: {{spec.host}})\n');
    const config = await file('haproxy.cfg');
    expect(config).to.include('http-request redirect location "https://shop.example.com/" code 301 if { var(txn.host) -m str old-shop.example.com }');
    // The object's % doubled: HAProxy's log-format sends it as one %.
    expect(config).to.include('http-request redirect location "https://shop.example.com/sale?discount=50%%25" code 302 if { var(txn.host) -m str sale.example.com }');
    expect(config).to.not.include('evil');
    // Its own validationTests, as `validate --config` runs them.
    const validated = captured();
    expect(await validateCommand({ config: join(folder, 'config.yaml') }, validated), validated.stdout.join('')).to.equal(0);
    expect(validated.stdout.join('')).to.include('4 passed, 0 failed (4 assertions in 2 tests)');
  });
});
