import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Outcome } from '../../lib/pipeline/outcome.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, ingress, service, slice, tlsSecret, type IngressOptions } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { RSA_1024_CERT, RSA_1024_KEY, TENANT_B_CERT, TENANT_B_KEY } from '../support/tls-refused-fixture.ts';

/**
 * One bad object never blocks the rest, end to end: the shipped
 * configuration (or the shipped one with a template line reading an
 * annotation), a real HAProxy, real traffic. For each kind of bad object,
 * the culprit is excluded and named with its field, another tenant's new
 * Ingress written at the same time is served by the same deployment (or,
 * when HAProxy itself refuses the culprit, after one more render and
 * validation), and the culprit is served once fixed.
 */

type Rendered = Extract<Outcome, { type: 'rendered' }>;
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** An Ingress for `host`, with its Service and an EndpointSlice on a loopback backend. */
function app(namespace: string, name: string, host: string, port: number, secretName?: string, options: IngressOptions = {}): string {
  return docs(
    ingress(name, host, [['/', 'Prefix', name, { number: 80 }]], secretName, { namespace, ...options }),
    service(name, [{ port: 80, targetPort: port }], namespace),
    slice(`${name}-1`, name, undefined, port, true, { namespace }),
  );
}

/** The shipped default_backend line, reading the routing view under either name (`ingress` is its old one). */
const DEFAULT_BACKEND = /^ {6}default_backend \{\{#(?:routes|ingress)\.defaultBackend\}\}/m;

/**
 * The shipped configuration with, in `frontend http`, a rule for each Ingress that has an annotation,
 * for its host: `[annotation, rule]` pairs, the rule reading the annotation's value (templates reaching
 * an object's own fields, as custom templates do).
 */
function perIngress(...rules: readonly (readonly [annotation: string, rule: string])[]): (shipped: string) => string {
  const lines = rules.flatMap(([annotation, rule]) => [
    `      {{#metadata.annotations.${annotation}}}`,
    `      ${rule} if { var(txn.host) -m str {{spec.rules.0.host}} }`,
    `      {{/metadata.annotations.${annotation}}}`,
  ]);
  return (shipped) => shipped.replace(DEFAULT_BACKEND, (line) => ['      {{#resources.ingresses}}', ...lines, '      {{/resources.ingresses}}', line].join('\n'));
}

/**
 * The shipped configuration with a frontend of its own for each Ingress annotated `own-port`, bound on
 * that port: a value of the object on a bind line, which `haproxy -c` accepts without binding and only a
 * reload can find taken.
 */
function ownListener(shipped: string): string {
  const frontend = [
    '    {{#resources.ingresses}}',
    '    {{#metadata.annotations.own-port}}',
    '    frontend own-{{metadata.name}}',
    '      bind 127.0.0.1:{{metadata.annotations.own-port}}',
    '      http-request return status 200 content-type text/plain string own',
    '    {{/metadata.annotations.own-port}}',
    '    {{/resources.ingresses}}',
    '',
    '    frontend status',
  ].join('\n');
  return shipped.replace('    frontend status', frontend);
}

const problems = (outcome: { readonly excluded: readonly { object: string; field: string; message: string }[] }) => outcome.excluded.map((problem) => `${problem.object} ${problem.field}`);

describe('one bad object end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  /** Local mode serving tenant-a's shop, with `backends` backends; `config` changes the shipped configuration. */
  async function shop(backends: number, config?: (shipped: string) => string): Promise<LocalHarness> {
    const started = await LocalHarness.start({ manifests: {}, backends, ...(config ? { config } : {}) });
    const mark = started.mark();
    await started.write('shop.yaml', app('tenant-a', 'shop', 'shop.example.com', started.backends[0]!));
    await started.next(mark, 'deployed');
    await started.until('shop.example.com', '/', [started.backends[0]!]);
    return started;
  }

  /** The rendering that a deployment after `mark` delivered. */
  async function deployedRender(mark: number): Promise<Rendered> {
    const deployed = await harness!.next(mark, 'deployed');
    const render = harness!.log.since(mark).find((o): o is Rendered => o.type === 'rendered' && o.revision === deployed.revision);
    expect(render, `a render of revision ${deployed.revision}`).to.not.equal(undefined);
    return render!;
  }

  it('1. leaves out a TLS Secret whose key HAProxy refuses (RSA-1024), serving the other tenants, then serves it once fixed', async () => {
    harness = await shop(3);
    const [, fresh, other] = harness.backends as [number, number, number];
    let mark = harness.mark();
    // Written together: one render has both.
    await harness.write(
      'change.yaml',
      docs(app('tenant-b', 'b', 'tenant-b.example.com', other, 'b-tls'), tlsSecret('b-tls', RSA_1024_CERT, RSA_1024_KEY, 'tenant-b'), app('tenant-a', 'fresh', 'fresh.example.com', fresh)),
    );
    const render = await deployedRender(mark);
    expect(render.excluded.find((p) => p.object === 'Secret tenant-b/b-tls')).to.deep.include({ field: 'data[tls.key]' });
    expect(render.excluded.find((p) => p.object === 'Secret tenant-b/b-tls')!.message).to.match(/an RSA key of 1024 bits \(80 bits of security\)/);
    // The same deployment serves the new Ingress of tenant-a, and tenant-b's routes over HTTP.
    await harness.until('fresh.example.com', '/', [fresh]);
    await harness.until('tenant-b.example.com', '/', [other]);
    expect(harness.log.since(mark).filter((o) => o.type === 'validationFailed' || o.type === 'quarantined')).to.deep.equal([]);
    // No certificate for it, and strict-sni: the handshake is refused rather than answered with another's.
    expect(await harness.handshake('tenant-b.example.com')).to.match(/^refused/);

    mark = harness.mark();
    await harness.write(
      'change.yaml',
      docs(app('tenant-b', 'b', 'tenant-b.example.com', other, 'b-tls'), tlsSecret('b-tls', TENANT_B_CERT, TENANT_B_KEY, 'tenant-b'), app('tenant-a', 'fresh', 'fresh.example.com', fresh)),
    );
    expect(problems(await deployedRender(mark))).to.deep.equal([]);
    await harness.untilHandshake('tenant-b.example.com', fingerprint(TENANT_B_CERT));
  });

  it('1. serves a certificate for 400 long host names, over crt-list lines HAProxy can read', async () => {
    harness = await shop(1);
    const hosts = Array.from({ length: 400 }, (_, i) => `${'h'.repeat(60)}.${'a'.repeat(60)}.${'b'.repeat(60)}.h${String(i).padStart(3, '0')}.example.com`);
    const mark = harness.mark();
    await harness.write('many.yaml', docs(ingress('many', undefined, [], 'many-tls', { namespace: 'tenant-a', tlsHosts: hosts }), tlsSecret('many-tls', LEAF_CERT, LEAF_KEY, 'tenant-a')));
    expect(problems(await deployedRender(mark))).to.deep.equal([]);
    const lines = (await readFile(join(harness.workDir, 'general', 'crt-list.txt'), 'utf8')).trim().split('\n');
    expect(lines.length).to.be.above(1);
    for (const line of lines) expect(line.length).to.be.below(65_535);
    await harness.untilHandshake(hosts[399]!, fingerprint(LEAF_CERT));
    await harness.untilHandshake(hosts[0]!, fingerprint(LEAF_CERT));
  });

  it('2. refuses "%" from an object in a header action, naming the object and field; writes it as "%%" where the template asks', async () => {
    const withTeamHeader = perIngress(
      ['team', 'http-response set-header X-Team {{metadata.annotations.team}}'],
      ['note', 'http-response set-header X-Note {{#escape.logFormat}}{{metadata.annotations.note}}{{/escape.logFormat}}'],
    );
    harness = await shop(3, withTeamHeader);
    const [, fresh, other] = harness.backends as [number, number, number];
    let mark = harness.mark();
    await harness.write(
      'change.yaml',
      docs(
        app('tenant-b', 'pwn', 'pwn.example.com', other, undefined, { annotations: { team: '%PWN' } }),
        app('tenant-a', 'fresh', 'fresh.example.com', fresh, undefined, { annotations: { note: '50%' } }),
      ),
    );
    const render = await deployedRender(mark);
    expect(problems(render)).to.deep.equal(['Ingress tenant-b/pwn metadata.annotations.team']);
    expect(render.excluded[0]!.message).to.match(/contains "%", which starts a log-format variable/);
    await harness.until('fresh.example.com', '/', [fresh]);
    // Asked for, the "%" is written "%%" and HAProxy sends it as it was.
    expect((await harness.get('fresh.example.com', '/')).headers?.['x-note']).to.equal('50%');
    // The excluded Ingress is left out whole: its host is not routed.
    expect((await harness.get('pwn.example.com', '/')).status).to.equal(404);

    mark = harness.mark();
    await harness.write(
      'change.yaml',
      docs(
        app('tenant-b', 'pwn', 'pwn.example.com', other, undefined, { annotations: { team: 'ops' } }),
        app('tenant-a', 'fresh', 'fresh.example.com', fresh, undefined, { annotations: { note: '50%' } }),
      ),
    );
    expect(problems(await deployedRender(mark))).to.deep.equal([]);
    await harness.until('pwn.example.com', '/', [other]);
    expect((await harness.get('pwn.example.com', '/')).headers?.['x-team']).to.equal('ops');
  });

  it('quarantines an object HAProxy refuses although it rendered cleanly: one more render and validation, the rest deployed, the object back once it changes', async () => {
    harness = await shop(3, perIngress(['deny-status', 'http-request deny deny_status {{metadata.annotations.deny-status}}']));
    const [, fresh, other] = harness.backends as [number, number, number];
    let mark = harness.mark();
    await harness.write(
      'change.yaml',
      docs(app('tenant-b', 'blocked', 'blocked.example.com', other, undefined, { annotations: { 'deny-status': '999' } }), app('tenant-a', 'fresh', 'fresh.example.com', fresh)),
    );
    const quarantined = await harness.next(mark, 'quarantined');
    expect(quarantined.objects.map((p) => `${p.object} ${p.field}`)).to.deep.equal(['Ingress tenant-b/blocked metadata.annotations.deny-status']);
    expect(quarantined.objects[0]!.message).to.match(/haproxy\.cfg:\d+: .*Unexpected status code '999'/);
    // One render and one validation more than a clean change: that very configuration is deployed.
    expect(quarantined.validations).to.equal(2);
    const deployed = await harness.next(mark, 'deployed');
    expect(deployed.hash).to.equal(quarantined.hash);
    await harness.until('fresh.example.com', '/', [fresh]);
    expect((await harness.get('blocked.example.com', '/')).status).to.equal(404);
    const view = JSON.parse((await harness.health('/debug/rendered')).body);
    expect(view.quarantined.map((p: { object: string }) => p.object)).to.deep.equal(['Ingress tenant-b/blocked']);
    // Later renders leave it out at once: another change costs nothing more.
    mark = harness.mark();
    await harness.write('fresh2.yaml', app('tenant-a', 'fresh2', 'fresh2.example.com', fresh));
    await harness.next(mark, 'deployed');
    expect(harness.log.since(mark).filter((o) => o.type === 'quarantined' || o.type === 'validationFailed')).to.deep.equal([]);

    mark = harness.mark();
    await harness.write(
      'change.yaml',
      docs(app('tenant-b', 'blocked', 'blocked.example.com', other, undefined, { annotations: { 'deny-status': '403' } }), app('tenant-a', 'fresh', 'fresh.example.com', fresh)),
    );
    const released = await harness.next(mark, 'released');
    expect(released.objects.map((p) => p.object)).to.deep.equal(['Ingress tenant-b/blocked']);
    await harness.next(mark, 'deployed');
    await eventually(
      () => harness!.get('blocked.example.com', '/'),
      (response) => response.status === 403,
      'blocked.example.com answered 403',
      10_000,
    );
  });

  it('quarantines the object whose line HAProxy refused at reload (its port taken), with HAProxy’s own message; the others deploy', async () => {
    const holder = createServer((socket) => socket.destroy());
    const taken = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as AddressInfo).port)));
    try {
      harness = await shop(3, ownListener);
      const [, fresh, other] = harness.backends as [number, number, number];
      const mark = harness.mark();
      await harness.write(
        'change.yaml',
        docs(app('tenant-b', 'blocked', 'blocked.example.com', other, undefined, { annotations: { 'own-port': String(taken) } }), app('tenant-a', 'fresh', 'fresh.example.com', fresh)),
      );
      const quarantined = await harness.next(mark, 'quarantined');
      expect(quarantined.by).to.equal('reload');
      expect(quarantined.objects.map((p) => `${p.object} ${p.field}`)).to.deep.equal(['Ingress tenant-b/blocked metadata.annotations.own-port']);
      // HAProxy's own words (2.6 and 3.x alike): the bind line's place, the frontend and the reason.
      const failed = harness.log.since(mark).find((o) => o.type === 'deployFailed');
      expect(failed?.error).to.match(
        new RegExp(`\\[ALERT\\].*Binding \\[[^\\]]*haproxy\\.cfg:\\d+\\] for frontend own-blocked: .*cannot bind socket \\(Address already in use\\).*127\\.0\\.0\\.1:${taken}`),
      );
      expect(quarantined.objects[0]!.message).to.match(
        new RegExp(`refused by HAProxy on local when it reloaded: haproxy\\.cfg:\\d+: for frontend own-blocked: .*cannot bind socket \\(Address already in use\\)`),
      );
      await harness.until('fresh.example.com', '/', [fresh]);
      expect((await harness.get('blocked.example.com', '/')).status).to.equal(404);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('4. refuses, before HAProxy runs, a template reading files or taking keywords from the environment; the last good configuration serves', async () => {
    harness = await shop(2, (shipped) => shipped);
    const [, fresh] = harness.backends as [number, number];
    const shipped = await readFile(harness.configPath, 'utf8');
    const marker = join(await mkdtemp(join(tmpdir(), 'guard-e2e-')), 'ran');
    let mark = harness.mark();
    await writeFile(
      harness.configPath,
      shipped
        .replace('      log stdout format raw local0 info', `      log stdout format raw local0 info\n      lua-load {{paths.general}}/x.lua\n      "\${LUAKW}" {{paths.general}}/x.lua`)
        .replace('      http-request set-var(txn.path) path', '      http-request set-var(txn.path) path\n      filter spoe engine leak config /etc/passwd')
        .replace('  files:\n', `  files:\n    x.lua: |\n      io.open("${marker}", "w"):write("ran")\n`),
    );
    const failed = await harness.next(mark, 'validationFailed');
    expect(failed.error).to.match(/lua-load loads and runs Lua code/);
    expect(failed.error).to.match(/environment-variables .*"\\"\$\{LUAKW\}\\" .*never allowed/);
    expect(failed.error).to.match(/files-outside-base .*filter spoe engine leak config \/etc\/passwd/);
    expect(failed.error).to.not.match(/root:/);
    expect(
      await access(marker).then(
        () => 'ran',
        () => 'never ran',
      ),
    ).to.equal('never ran');
    expect(await harness.health('/readyz')).to.deep.include({ status: 503 });
    await harness.until('shop.example.com', '/', [harness.backends[0]!]);

    mark = harness.mark();
    await writeFile(harness.configPath, shipped);
    await harness.write('fresh.yaml', app('tenant-a', 'fresh', 'fresh.example.com', fresh));
    await harness.until('fresh.example.com', '/', [fresh]);
    expect((await harness.health('/readyz')).status).to.equal(200);
  });

  it('5. keeps serving while the temporary folder cannot take the copy to validate, retries on its own, and serves the change once it can', async () => {
    harness = await shop(2);
    const [, fresh] = harness.backends as [number, number];
    const root = await mkdtemp(join(tmpdir(), 'full-tmp-'));
    const blocked = join(root, 'tmp');
    // A path that cannot take a directory: validation fails as it does on a full disk, before HAProxy runs.
    await writeFile(blocked, 'not a folder');
    const before = process.env['TMPDIR'];
    process.env['TMPDIR'] = blocked;
    try {
      const mark = harness.mark();
      await harness.write('fresh.yaml', app('tenant-a', 'fresh', 'fresh.example.com', fresh));
      const unavailable = await harness.next(mark, 'validationUnavailable');
      expect(unavailable.error).to.match(/ENOTDIR/);
      await harness.log.waitFor(mark, (o): o is Outcome => o.type === 'validationUnavailable' && o.attempt === 2, 'a second attempt');
      expect(harness.log.since(mark).filter((o) => o.type === 'validationFailed')).to.deep.equal([]);
      expect((await harness.health('/readyz')).body).to.match(/^not ready: validation cannot run/);
      expect((await harness.get('fresh.example.com', '/')).status).to.equal(404);
      await harness.until('shop.example.com', '/', [harness.backends[0]!]);
      // The space comes back: no manifest changes, the retry delivers it.
      await rm(blocked);
      await mkdir(blocked);
      await harness.until('fresh.example.com', '/', [fresh], 40_000);
      expect((await harness.health('/readyz')).status).to.equal(200);
    } finally {
      if (before === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = before;
    }
  });

  it('6. leaves out endpoints at unspecified, broadcast, multicast and link-local addresses, with the reason, serving the rest', async () => {
    harness = await shop(2);
    const [, good] = harness.backends as [number, number];
    let mark = harness.mark();
    const addresses = ['0.0.0.0', '127.0.0.1', '255.255.255.255', '224.0.0.1', '169.254.169.254'];
    await harness.write(
      'odd.yaml',
      docs(
        ingress('odd', 'odd.example.com', [['/', 'Prefix', 'odd', { number: 80 }]], undefined, { namespace: 'tenant-b' }),
        service('odd', [{ port: 80, targetPort: good }], 'tenant-b'),
        slice('odd-1', 'odd', undefined, good, true, { namespace: 'tenant-b', addresses }),
        slice('odd-2', 'odd', undefined, good, true, { namespace: 'tenant-b', addresses: ['::', 'fe80::1', 'ff02::1'], addressType: 'IPv6' }),
      ),
    );
    const render = await deployedRender(mark);
    expect(render.excluded.map((p) => `${p.object} ${p.field}: ${p.message}`)).to.deep.equal([
      'EndpointSlice tenant-b/odd-1 endpoints[0].addresses[0]: endpoint left out: "0.0.0.0" is the unspecified address ("any"), where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-1 endpoints[2].addresses[0]: endpoint left out: "255.255.255.255" is the broadcast address, where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-1 endpoints[3].addresses[0]: endpoint left out: "224.0.0.1" is a multicast address, where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-1 endpoints[4].addresses[0]: endpoint left out: "169.254.169.254" is a link-local address, where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-2 endpoints[0].addresses[0]: endpoint left out: "::" is the unspecified address ("any"), where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-2 endpoints[1].addresses[0]: endpoint left out: "fe80::1" is a link-local address, where no Service endpoint can be',
      'EndpointSlice tenant-b/odd-2 endpoints[2].addresses[0]: endpoint left out: "ff02::1" is a multicast address, where no Service endpoint can be',
    ]);
    const config = await readFile(join(harness.workDir, 'haproxy.cfg'), 'utf8');
    expect(config.split('\n').filter((line) => line.includes(`:${good} check`))).to.deep.equal([`  server srv-127.0.0.1-${good} 127.0.0.1:${good} check`]);
    await harness.until('odd.example.com', '/', [good]);

    mark = harness.mark();
    await harness.write(
      'odd.yaml',
      docs(
        ingress('odd', 'odd.example.com', [['/', 'Prefix', 'odd', { number: 80 }]], undefined, { namespace: 'tenant-b' }),
        service('odd', [{ port: 80, targetPort: good }], 'tenant-b'),
        slice('odd-1', 'odd', undefined, good, true, { namespace: 'tenant-b' }),
      ),
    );
    // The same servers as before: nothing to deploy, and nothing left out any more.
    expect(problems(await harness.next(mark, 'rendered'))).to.deep.equal([]);
    await harness.until('odd.example.com', '/', [good]);
  });
});
