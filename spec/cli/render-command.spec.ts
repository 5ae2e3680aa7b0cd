import { expect } from 'chai';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderCommand } from '../../lib/cli/render-command.ts';
import type { CommandOutput } from '../../lib/cli/output.ts';
import { checkConfig } from '../../lib/haproxy/check.ts';

function captured(): CommandOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

const manifests = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: shop, namespace: default }
spec:
  ingressClassName: haproxy
  rules:
    - host: shop.example.com
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: evil, namespace: default }
spec:
  ingressClassName: haproxy
  rules:
    - host: "evil.example.com # comment"
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec: { ports: [ { port: 80, targetPort: 8080 } ] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-abc, namespace: default, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
ports: [ { port: 8080 } ]
endpoints: [ { addresses: [127.0.0.1] } ]
---
apiVersion: v1
kind: ConfigMap
metadata: { name: unrelated, namespace: default }
data: { a: b }
`;

describe('render command', () => {
  it('renders manifests into a directory that haproxy -c accepts as it stands, listing excluded objects', async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    await writeFile(join(input, 'app.yaml'), manifests);
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: undefined }, output)).to.equal(0);
    // One line on stderr, for the one excluded object, naming it and the field at fault.
    expect(output.stderr).to.have.length(1);
    expect(output.stderr[0]).to.match(/^excluded Ingress default\/evil: spec\.rules\[0\]\.host: .*evil\.example\.com.*\n$/);
    expect(output.stdout.join('')).to.include(`into ${out}`);
    const config = await readFile(join(out, 'haproxy.cfg'), 'utf8');
    expect(config).to.include(`default-path origin ${out}`);
    expect(config).to.include('server srv-127.0.0.1-8080 127.0.0.1:8080 check');
    expect(await readFile(join(out, 'maps', 'host.map'), 'utf8')).to.equal('shop.example.com shop.example.com\n');
    const verdict = await checkConfig(join(out, 'haproxy.cfg'));
    expect(verdict.output).to.not.include('ALERT');
    expect(verdict.valid).to.equal(true);
  });

  it('names each Ingress of another class, or of none, with the class served: they are not served', async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    await writeFile(
      join(input, 'app.yaml'),
      manifests
        .replace('name: evil, namespace: default }\nspec:\n  ingressClassName: haproxy', 'name: old, namespace: default }\nspec:\n  ingressClassName: nginx')
        .replace('"evil.example.com # comment"', 'old.example.com') +
        '---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: bare, namespace: web }\nspec: { rules: [ { host: bare.example.com } ] }\n',
    );
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: undefined }, output)).to.equal(0);
    expect(output.stderr).to.deep.equal([
      'warning Ingress default/old: not served: its class is "nginx", and this controller serves class "haproxy" (ingress.className): set spec.ingressClassName: haproxy on it (or ingress.className: "nginx" in the controller configuration) to serve it\n',
      'warning Ingress web/bare: not served: it has no class (no spec.ingressClassName or kubernetes.io/ingress.class), and this controller serves only class "haproxy" (ingress.className): set spec.ingressClassName: haproxy on it to serve it\n',
    ]);
    expect(await readFile(join(out, 'maps', 'host.map'), 'utf8')).to.equal('shop.example.com shop.example.com\n');
  });

  it("renders basic auth without auth-realm with each family's default realm, which haproxy -c accepts", async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    const users = (name: string, data: string) => `---\napiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: Opaque\ndata: { ${data} }\n`;
    const hash = Buffer.from('bob:$5$salt$kpa26zwgX83BPSR8d7w93OIXbFt/d3UOTZaAu5vsTM6\n').toString('base64');
    const secured = (annotations: string) =>
      manifests.replace('metadata: { name: shop, namespace: default }', `metadata: { name: shop, namespace: default, annotations: { ${annotations} } }`);
    await writeFile(
      join(input, 'app.yaml'),
      secured('nginx.ingress.kubernetes.io/auth-type: basic, nginx.ingress.kubernetes.io/auth-secret: htpasswd').replace('"evil.example.com # comment"', 'evil.example.com') +
        users('htpasswd', `auth: ${hash}`),
    );
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: undefined }, output), output.stderr.join('')).to.equal(0);
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).to.include('http-request auth realm "Authentication Required" if');
    await writeFile(
      join(input, 'app.yaml'),
      secured('haproxy.org/auth-type: basic-auth, haproxy.org/auth-secret: users').replace('"evil.example.com # comment"', 'evil.example.com') +
        users('users', `bob: ${Buffer.from('$5$salt$kpa26zwgX83BPSR8d7w93OIXbFt/d3UOTZaAu5vsTM6').toString('base64')}`),
    );
    expect(await renderCommand({ manifests: input, out, config: undefined }, captured())).to.equal(0);
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).to.include('http-request auth realm "Protected Content" if');
  });

  it("fails (exit 1) with HAProxy's alert when the configuration it wrote would not pass haproxy -c", async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    const configFile = join(await mkdtemp(join(tmpdir(), 'render-config-')), 'config.yaml');
    await writeFile(configFile, 'watchedResources:\n  services: { apiVersion: v1, kind: Service }\ntemplates:\n  haproxyConfig: |\n    global\n      no-such-keyword 1\n');
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: configFile }, output)).to.equal(1);
    const errors = output.stderr.join('');
    expect(errors).to.match(new RegExp(`^error: haproxy -c refuses the configuration written to ${out}:\n`));
    expect(errors).to.include('haproxy.cfg:2').and.include('no-such-keyword');
    expect(output.stdout).to.deep.equal([]);
  });

  it('refuses, writing nothing, a configuration with directives the guard refuses: haproxy -c on it would run them', async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    const configFile = join(await mkdtemp(join(tmpdir(), 'render-config-')), 'config.yaml');
    await writeFile(configFile, 'watchedResources:\n  services: { apiVersion: v1, kind: Service }\ntemplates:\n  haproxyConfig: |\n    global\n      lua-load /tmp/x.lua\n');
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: configFile }, output)).to.equal(1);
    expect(output.stderr.join('')).to.match(/^error: haproxy\.cfg:2: lua-load loads and runs Lua code: "lua-load \/tmp\/x\.lua"; allowDirectives does not allow it$/m);
    expect(await readdir(out)).to.deep.equal([]);
  });

  it('fails naming the file of a manifest it cannot read, and writes nothing', async () => {
    const input = await mkdtemp(join(tmpdir(), 'render-in-'));
    const out = await mkdtemp(join(tmpdir(), 'render-out-'));
    await writeFile(join(input, 'bad.yaml'), 'kind: Service\nmetadata: {name: x}\n');
    const output = captured();
    expect(await renderCommand({ manifests: input, out, config: undefined }, output)).to.equal(1);
    expect(output.stderr.join('')).to.equal('error: bad.yaml#1: has no apiVersion\n');
  });

  it('fails with every configuration error when --config is invalid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'render-cfg-'));
    await writeFile(join(dir, 'config.yaml'), 'debounce: soon\nwatchedResources: {}\n');
    const output = captured();
    expect(await renderCommand({ manifests: dir, out: dir, config: join(dir, 'config.yaml') }, output)).to.equal(1);
    const errors = output.stderr.join('');
    expect(errors).to.include(`${join(dir, 'config.yaml')}: debounce:`);
    expect(errors).to.include('templates');
  });
});
