import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { dump } from 'js-yaml';
import { defaultKubeConnection, inClusterConnection, kubeConnectionFromFile } from '../../../lib/kube/kube-connection.ts';
import { kubeRequest } from '../../../lib/kube/kube-request.ts';
import { certificateAuthority } from '../../support/client-certificates.ts';
import { ManualClock } from '../../support/clocks.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');

function kubeconfig(options: { cluster?: Record<string, unknown>; user?: Record<string, unknown>; context?: Record<string, unknown>; name?: string }): Record<string, unknown> {
  const name = options.name ?? 'spec';
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': name,
    contexts: [{ name, context: { cluster: name, user: name, ...options.context } }],
    clusters: [{ name, cluster: { server: 'https://127.0.0.1:6443', ...options.cluster } }],
    users: [{ name, user: { ...options.user } }],
  };
}

describe('KubeConnection', () => {
  let directory: string;
  const write = (file: string, content: unknown) => {
    const path = join(directory, file);
    writeFileSync(path, typeof content === 'string' ? content : dump(content));
    return path;
  };

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'kube-connection-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  describe('over TLS to a server that asks for a client certificate', () => {
    const clients = certificateAuthority('clients');
    let server: Server;
    let seen: { commonName: string | undefined; authorization: string | undefined }[];
    let url: string;

    beforeEach(async () => {
      seen = [];
      // Its certificate names example.com, not 127.0.0.1: only tls-server-name makes it acceptable.
      server = createServer({ cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY, ca: clients.cert, requestCert: true, rejectUnauthorized: true }, (request, response) => {
        const peer = (request.socket as TLSSocket).getPeerCertificate();
        seen.push({ commonName: peer.subject?.CN as string | undefined, authorization: request.headers.authorization });
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ kind: 'APIVersions', versions: ['v1'] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterEach(() => new Promise((resolve) => server.close(resolve)));

    it('sends the client certificate and token, trusting the CA file (relative to the kubeconfig) for the tls-server-name', async () => {
      const client = clients.issue('controller', 'system:masters');
      write('ca.crt', SELF_SIGNED_CERT);
      const file = write(
        'config',
        kubeconfig({
          cluster: { server: url, 'certificate-authority': 'ca.crt', 'tls-server-name': 'example.com' },
          user: { 'client-certificate-data': base64(client.cert), 'client-key-data': base64(client.key), token: 'secret-token' },
        }),
      );
      const connection = kubeConnectionFromFile(file);
      expect(await kubeRequest(connection, { method: 'GET', path: '/api' })).to.deep.equal({ kind: 'APIVersions', versions: ['v1'] });
      expect(seen).to.deep.equal([{ commonName: 'controller', authorization: 'Bearer secret-token' }]);
    });

    it('refuses the server when its certificate does not name the server it reached', async () => {
      const client = clients.issue('controller', 'system:masters');
      const file = write(
        'config',
        kubeconfig({
          cluster: { server: url, 'certificate-authority-data': base64(SELF_SIGNED_CERT) },
          user: { 'client-certificate-data': base64(client.cert), 'client-key-data': base64(client.key) },
        }),
      );
      const error = await kubeRequest(kubeConnectionFromFile(file), { method: 'GET', path: '/api' }).catch((caught: unknown) => caught);
      expect(String(error)).to.match(/altnames|does not match|IP: 127\.0\.0\.1 is not in the cert/i);
      expect(seen).to.deep.equal([]);
    });
  });

  it('merges the files of KUBECONFIG as kubectl does: the first to name a context, cluster or user wins', async () => {
    const first = write('first', { ...kubeconfig({ name: 'a', user: { token: 'first' }, context: { namespace: 'team-a' } }), clusters: [] });
    const second = write('second', {
      ...kubeconfig({ name: 'a', cluster: { server: 'https://second.example:6443' }, user: { token: 'second' } }),
      'current-context': 'elsewhere',
    });
    const connection = defaultKubeConnection({ KUBECONFIG: `${first}:${second}` }, join(directory, 'no-service-account'));
    expect([connection.server, connection.namespace]).to.deep.equal(['https://second.example:6443', 'team-a']);
    expect((await connection.authorise()).headers['authorization']).to.equal('Bearer first');
  });

  it('in a pod: the service account token, read again once a minute has passed, the CA and the namespace of its mount', async () => {
    write('token', 'token-1\n');
    write('ca.crt', SELF_SIGNED_CERT);
    write('namespace', 'haproxy');
    const clock = new ManualClock();
    const connection = inClusterConnection({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, directory, clock);
    expect([connection.server, connection.namespace]).to.deep.equal(['https://[fd00::1]:443', 'haproxy']);
    expect((await connection.authorise()).headers['authorization']).to.equal('Bearer token-1');
    write('token', 'token-2\n');
    await clock.advance(60_000);
    expect((await connection.authorise()).headers['authorization']).to.equal('Bearer token-1');
    await clock.advance(1);
    expect((await connection.authorise()).headers['authorization']).to.equal('Bearer token-2');
  });

  it('runs an exec credential plugin, with its env, and keeps its credential until it expires', async () => {
    const calls = join(directory, 'calls');
    const plugin = write(
      'plugin.sh',
      `#!/bin/sh\necho call >> "${calls}"\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$PLUGIN_TOKEN" "$1"\n`,
    );
    const connect = (expires: string) =>
      kubeConnectionFromFile(
        write(
          'config',
          kubeconfig({ user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: [plugin, expires], env: [{ name: 'PLUGIN_TOKEN', value: 'from-plugin' }] } } }),
        ),
      );
    const lasting = connect('2999-01-01T00:00:00Z');
    expect((await lasting.authorise()).headers['authorization']).to.equal('Bearer from-plugin');
    await lasting.authorise();
    expect(readFileSync(calls, 'utf8')).to.equal('call\n');
    const expired = connect('2000-01-01T00:00:00Z');
    await expired.authorise();
    await expired.authorise();
    expect(readFileSync(calls, 'utf8')).to.equal('call\ncall\ncall\n');
  });

  it('names the kubeconfig settings it does not speak, and plain HTTP without insecure-skip-tls-verify', () => {
    const load = (config: Record<string, unknown>) => () => kubeConnectionFromFile(write('config', config));
    expect(load(kubeconfig({ cluster: { 'proxy-url': 'http://proxy:3128' } }))).to.throw(/cluster spec: proxy-url is not supported/);
    expect(load(kubeconfig({ user: { 'auth-provider': { name: 'oidc' } } }))).to.throw(/user spec: auth-provider is not supported/);
    expect(load(kubeconfig({ cluster: { server: 'http://127.0.0.1:8080' } }))).to.throw(/plain HTTP needs insecure-skip-tls-verify/);
    expect(load(kubeconfig({ cluster: { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true } }))).not.to.throw();
    expect(load({ ...kubeconfig({}), 'current-context': 'missing' })).to.throw(/the kubeconfig has no context named missing/);
  });
});
