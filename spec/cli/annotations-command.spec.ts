import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotationsCommand } from '../../lib/cli/annotations-command.ts';
import { UsageError } from '../../lib/cli/arguments.ts';
import type { CommandOutput } from '../../lib/cli/output.ts';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { writeKubeconfig } from '../support/fake-apiserver/kubeconfig.ts';
import { reservePort } from '../support/ports.ts';

function captured(): CommandOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

const BCRYPT = '$2y$04$ehJ/BjPX7IidaLLJ6tlg/e9lT5JN1b6SRYX3.G4sWDHpSrcQylwYi';
const APR1 = '$apr1$abcdefgh$h7ZMHhhVcuEqF1m5wGTqF1';
const base64 = (text: string): string => Buffer.from(text).toString('base64');

function ingress(namespace: string, name: string, annotations: Record<string, string>, tls = false, ingressClassName: string | null = 'haproxy'): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { namespace, name, annotations },
    spec: {
      ...(ingressClassName === null ? {} : { ingressClassName }),
      ...(tls ? { tls: [{ hosts: [`${name}.example.com`], secretName: `${name}-tls` }] } : {}),
      rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { number: 80 } } } }] } }],
    },
  };
}

const SHOP = ingress(
  'web',
  'shop',
  {
    'nginx.ingress.kubernetes.io/proxy-read-timeout': '120',
    'nginx.ingress.kubernetes.io/configuration-snippet': 'more_set_headers "X-Frame-Options: DENY";',
    'nginx.ingress.kubernetes.io/auth-type': 'basic',
    'nginx.ingress.kubernetes.io/auth-secret': 'shop-users',
    'nginx.ingress.kubernetes.io/proxy-body-size': '8x',
  },
  true,
);
const API = ingress('web', 'api', { 'haproxy.org/timeout-server': '30s', 'haproxy.org/load-balance': 'leastconn' });
const PLAIN = ingress('other', 'plain', { 'example.com/owner': 'team-a' }, false, 'nginx');
const USERS: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'web', name: 'shop-users' }, data: { auth: base64(`alice:${APR1}\nbob:${BCRYPT}\n`) } };

/** The report's lines for these objects, wherever they were read from (source names aside). */
const EXPECTED_REPORT = [
  'Ingress other/plain',
  '  no haproxy.org/ or nginx.ingress.kubernetes.io/ annotations',
  '  class     not served: its class is "nginx", and this controller serves class "haproxy" (ingress.className): set spec.ingressClassName: haproxy on it (or ingress.className: "nginx" in the controller configuration) to serve it',
  '',
  'Ingress web/api',
  '  honoured  haproxy.org/load-balance: "leastconn" -> backend.balance',
  '  honoured  haproxy.org/timeout-server: "30s" -> backend.timeouts.server',
  '  backend settings: {"timeouts":{"server":30000},"balance":{"algorithm":"leastconn"}}',
  '',
  'Ingress web/shop',
  '  honoured  nginx.ingress.kubernetes.io/auth-secret: "shop-users" -> route.basicAuth',
  '  honoured  nginx.ingress.kubernetes.io/auth-type: "basic" -> route.basicAuth',
  '  ignored   nginx.ingress.kubernetes.io/configuration-snippet: "more_set_headers \\"X-Frame-Options: DENY\\";": snippets are not supported: raw configuration from an object could add any directive (and it is nginx configuration, which HAProxy cannot read)',
  '  invalid   nginx.ingress.kubernetes.io/proxy-body-size: "8x": not a size: use a whole number with an optional unit k, m or g, e.g. "8m"',
  '  honoured  nginx.ingress.kubernetes.io/proxy-read-timeout: "120" -> backend.timeouts.server',
  '  default   Strict-Transport-Security on HTTPS answers, as ingress-nginx\'s ConfigMap default (hsts: "true"); nginx.ingress.kubernetes.io/hsts: "false" turns it off',
  '  excluded  an invalid annotation leaves this Ingress out (its routes are not served) until it is fixed',
  '  auth      Secret web/shop-users: user "alice" cannot log in: Apache\'s MD5 ($apr1$, htpasswd\'s default) is not a crypt(3) scheme, so HAProxy never matches it: re-hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m yescrypt`',
  '  auth      Secret web/shop-users: 1 of 2 users can log in (htpasswd)',
  '  backend settings: {"timeouts":{"server":120000}}',
  '  route settings: {"basicAuth":{"secret":{"namespace":"web","name":"shop-users"},"realm":"Authentication Required"},"sslRedirect":{"code":308},"hsts":{"maxAge":31536000,"includeSubdomains":true,"preload":false}}',
  '',
  'Summary: 3 Ingresses (1 not of the class served, 1 left out by their annotations), by annotation',
  'annotation                                         honoured  ignored  invalid  left out',
  'haproxy.org/load-balance                                  1        0        0         0',
  'haproxy.org/timeout-server                                1        0        0         0',
  'nginx.ingress.kubernetes.io/auth-secret                   1        0        0         0',
  'nginx.ingress.kubernetes.io/auth-type                     1        0        0         0',
  'nginx.ingress.kubernetes.io/configuration-snippet         0        1        0         0',
  'nginx.ingress.kubernetes.io/proxy-body-size               0        0        1         0',
  'nginx.ingress.kubernetes.io/proxy-read-timeout            1        0        0         0',
  'total                                                     5        1        1         0',
  '',
];

const withoutSources = (text: string): string => text.replace(/^(Ingress \S+) \(.*\)$/gm, '$1');

describe('annotations command', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'annotations-command-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('over manifests', () => {
    it('reports each Ingress, the auth users who cannot log in, and the summary; exit 0', async () => {
      await writeFile(join(dir, 'apps.yaml'), [SHOP, API, USERS].map((object) => JSON.stringify(object)).join('\n---\n'));
      await writeFile(join(dir, 'plain.json'), JSON.stringify(PLAIN));
      const output = captured();
      expect(await annotationsCommand({ manifests: dir }, output)).to.equal(0);
      expect(output.stderr).to.deep.equal([]);
      const text = output.stdout.join('');
      expect(text).to.include('Ingress web/shop (apps.yaml#1)');
      expect(withoutSources(text)).to.equal(EXPECTED_REPORT.join('\n'));
    });

    it('names each Ingress of another class or of none with the class served, each left out for authentication it cannot serve, and each sharing a host across namespaces', async () => {
      const classless = ingress('web', 'classless', {}, false, null);
      const oauth = ingress('web', 'oauth', {
        'nginx.ingress.kubernetes.io/auth-url': 'https://auth.example.com/oauth2/auth',
        'nginx.ingress.kubernetes.io/auth-snippet': 'proxy_set_header X-Tenant acme;',
      });
      const first = { ...ingress('team-a', 'first', {}), spec: { ingressClassName: 'haproxy', rules: [{ host: 'shared.example.com' }] } };
      const second = { ...ingress('team-b', 'second', {}), spec: { ingressClassName: 'haproxy', rules: [{ host: 'shared.example.com' }] } };
      await writeFile(join(dir, 'apps.yaml'), [classless, oauth, first, second].map((object) => JSON.stringify(object)).join('\n---\n'));
      const output = captured();
      expect(await annotationsCommand({ manifests: dir }, output)).to.equal(0);
      const text = withoutSources(output.stdout.join(''));
      expect(text).to.include(
        'Ingress web/classless\n  no haproxy.org/ or nginx.ingress.kubernetes.io/ annotations\n  class     not served: it has no class (no spec.ingressClassName or kubernetes.io/ingress.class), and this controller serves only class "haproxy" (ingress.className): set spec.ingressClassName: haproxy on it to serve it\n',
      );
      expect(text).to.include(
        'Ingress web/oauth\n  left out  nginx.ingress.kubernetes.io/auth-snippet: "proxy_set_header X-Tenant acme;": auth-snippet is nginx configuration, which HAProxy cannot read: served without it the auth service would judge another request, so this Ingress is left out\n  honoured  nginx.ingress.kubernetes.io/auth-url: "https://auth.example.com/oauth2/auth" -> route.externalAuth\n  excluded  this Ingress is left out (its routes are not served): an annotation asks for what cannot be served here\n',
      );
      const shared = (other: string) =>
        `  host      host shared.example.com is also claimed by Ingresses of namespace ${other}: a host belongs to the namespace of its oldest Ingress, and the others' rules and TLS entries for it are not served (ingress-nginx merges their paths); list the namespaces in ingress.sharedHostNamespaces to serve them all\n`;
      expect(text).to.include(`Ingress team-a/first\n  no haproxy.org/ or nginx.ingress.kubernetes.io/ annotations\n${shared('team-b')}`);
      expect(text).to.include(`Ingress team-b/second\n  no haproxy.org/ or nginx.ingress.kubernetes.io/ annotations\n${shared('team-a')}`);
      expect(text).to.include('Summary: 4 Ingresses (1 not of the class served, 1 left out by their annotations), by annotation\n');
      expect(text).to.include(
        'nginx.ingress.kubernetes.io/auth-snippet         0        0        0         1\nnginx.ingress.kubernetes.io/auth-url             1        0        0         0\n',
      );
      // Namespaces that may share hosts are not named.
      const config = join(await mkdtemp(join(tmpdir(), 'annotations-config-')), 'config.yaml');
      const shipped = await readFile(defaultConfigPath(), 'utf8');
      await writeFile(config, shipped.replace(/^ingress:\n/m, 'ingress:\n  sharedHostNamespaces: [team-a, team-b]\n'));
      const sharing = captured();
      expect(await annotationsCommand({ manifests: dir, config }, sharing), sharing.stderr.join('')).to.equal(0);
      expect(sharing.stdout.join('')).to.not.include('also claimed');
    });

    it('says when an auth Secret is not among the manifests', async () => {
      await writeFile(join(dir, 'apps.yaml'), JSON.stringify(SHOP));
      const output = captured();
      expect(await annotationsCommand({ manifests: dir }, output)).to.equal(0);
      expect(output.stdout.join('')).to.include(`  auth      Secret web/shop-users: not found in ${dir}; no user can log in\n`);
    });

    it('fails with exit 1 on a missing folder or a broken manifest, naming it', async () => {
      const missing = captured();
      expect(await annotationsCommand({ manifests: join(dir, 'nope') }, missing)).to.equal(1);
      expect(missing.stderr).to.deep.equal([`error: ${join(dir, 'nope')}: no such directory\n`]);
      await writeFile(join(dir, 'broken.yaml'), 'kind: Ingress\nmetadata: [unclosed\n');
      const broken = captured();
      expect(await annotationsCommand({ manifests: dir }, broken)).to.equal(1);
      expect(broken.stderr.join('')).to.match(/^error: broken\.yaml/);
      expect(broken.stdout).to.deep.equal([]);
    });
  });

  describe('over a cluster', () => {
    let fake: FakeApiServer;

    before(async () => {
      fake = await startFakeApiServer({ requireToken: true });
    });

    after(async () => {
      await fake.close();
    });

    it("reads every namespace's Ingresses and the auth Secrets they name, with the same report", async () => {
      for (const object of [SHOP, API, PLAIN, USERS]) fake.create(object);
      const output = captured();
      expect(await annotationsCommand({ kubeconfig: fake.kubeconfigPath }, output)).to.equal(0);
      expect(output.stderr).to.deep.equal([]);
      expect(output.stdout.join('')).to.equal(EXPECTED_REPORT.join('\n'));
    });

    it('reads one namespace with --namespace', async () => {
      const output = captured();
      expect(await annotationsCommand({ kubeconfig: fake.kubeconfigPath, namespace: 'other' }, output)).to.equal(0);
      expect(output.stdout.join('')).to.match(/^Ingress other\/plain\n[\s\S]*Summary: 1 Ingresses \(1 not of the class served, 0 left out by their annotations\), by annotation\n/);
    });

    it('fails with exit 1 when the cluster answers with an error', async () => {
      fake.faults.failNext(1, { verb: 'list', status: 500 });
      const output = captured();
      expect(await annotationsCommand({ kubeconfig: fake.kubeconfigPath }, output)).to.equal(1);
      expect(output.stderr.join('')).to.match(/^error: http:\/\/127\.0\.0\.1:\d+: GET \/apis\/networking\.k8s\.io\/v1\/ingresses: 500 /);
    });

    it('fails with exit 1 when the cluster cannot be reached, or the kubeconfig read', async () => {
      const port = await reservePort();
      const kubeconfig = join(dir, 'kubeconfig');
      await writeKubeconfig(kubeconfig, { server: `http://127.0.0.1:${port}`, token: 't', namespace: 'default' });
      const unreachable = captured();
      expect(await annotationsCommand({ kubeconfig }, unreachable)).to.equal(1);
      expect(unreachable.stderr.join('')).to.match(new RegExp(`^error: http://127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
      const missing = captured();
      expect(await annotationsCommand({ kubeconfig: join(dir, 'none') }, missing)).to.equal(1);
      expect(missing.stderr.join('')).to.match(/^error: --kubeconfig .*none: /);
    });
  });

  it('is a usage error without exactly one source, or with --namespace over manifests', async () => {
    const output = captured();
    await expectUsage(annotationsCommand({}, output), 'annotations: give exactly one of --manifests and --kubeconfig');
    await expectUsage(annotationsCommand({ manifests: dir, kubeconfig: 'k' }, output), 'annotations: give exactly one of --manifests and --kubeconfig');
    await expectUsage(annotationsCommand({ manifests: dir, namespace: 'web' }, output), 'annotations: --namespace is for --kubeconfig');
  });
});

async function expectUsage(run: Promise<number>, message: string): Promise<void> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).to.be.instanceOf(UsageError);
  expect((error as Error).message).to.equal(message);
}
