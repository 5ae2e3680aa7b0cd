import { expect } from 'chai';
import { UsageError } from '../../../lib/cli/arguments.ts';
import { runSettings } from '../../../lib/cli/run-settings.ts';

describe('runSettings', () => {
  const env = { POD_NAMESPACE: 'haproxy', POD_NAME: 'controller-0' };

  it('applies the seed defaults', () => {
    expect(runSettings({}, env, undefined)).to.deep.equal({
      namespace: 'haproxy',
      configMap: 'haproxy-config',
      credentialsSecret: 'haproxy-template-ic-credentials',
      identity: 'controller-0',
      lease: { name: 'haproxy-template-ic-leader', durationMs: 15_000, renewDeadlineMs: 10_000, retryMs: 2_000 },
      publishService: undefined,
      dataplaneTls: undefined,
      dataplaneContainer: 'dataplaneapi',
      kubeconfig: undefined,
      bindAddress: '0.0.0.0',
      healthPort: 8080,
      metricsPort: 9090,
      webhook: {
        port: 9443,
        certificate: { kind: 'generated' },
        service: { namespace: 'haproxy', name: 'haproxy-template-ic' },
        configuration: undefined,
      },
    });
  });

  it('reads where the webhook gets its certificate, and switches it off', () => {
    const webhook = (values: Record<string, string | boolean>, environment: Record<string, string> = env) => runSettings(values, environment, undefined).webhook;
    expect(webhook({ 'webhook-cert-file': '/tls/tls.crt', 'webhook-key-file': '/tls/tls.key', 'webhook-port': '8443' })).to.deep.include({
      port: 8443,
      certificate: { kind: 'files', certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' },
    });
    expect(webhook({ 'webhook-secret': 'hook-tls' })!.certificate).to.deep.equal({ kind: 'secret', name: 'hook-tls', generate: false });
    expect(webhook({ 'webhook-generate-certificate': true }, { ...env, WEBHOOK_SECRET: 'hook-tls' })!.certificate).to.deep.equal({ kind: 'secret', name: 'hook-tls', generate: true });
    expect(webhook({ 'webhook-service': 'edge/hti', 'webhook-configuration': 'edge-hti' })).to.deep.include({ service: { namespace: 'edge', name: 'hti' }, configuration: 'edge-hti' });
    expect(webhook({ 'webhook-service': 'hti' })!.service).to.deep.equal({ namespace: 'haproxy', name: 'hti' });
    expect(webhook({ 'no-webhook': true })).to.equal(undefined);
  });

  it('lets flags win over the environment and the environment over defaults', () => {
    const settings = runSettings(
      { namespace: 'edge', configmap: 'cfg', 'publish-service': 'haproxy', 'no-leader-election': true },
      { ...env, CONFIGMAP_NAME: 'ignored', CREDENTIALS_SECRET_NAME: 'creds' },
      undefined,
    );
    expect(settings).to.deep.include({ namespace: 'edge', configMap: 'cfg', credentialsSecret: 'creds', lease: undefined });
    expect(settings.publishService).to.deep.equal({ namespace: 'edge', name: 'haproxy' });
  });

  it('takes the namespace from the service account mount when nothing else gives it', () => {
    expect(runSettings({}, { POD_NAME: 'c' }, 'from-mount').namespace).to.equal('from-mount');
  });

  it('names the flag at fault', () => {
    const fails = (values: Record<string, string>, message: RegExp, environment: Record<string, string> = env) =>
      expect(() => runSettings(values, environment, undefined)).to.throw(UsageError, message);
    fails({}, /--namespace is required/, { POD_NAME: 'c' });
    fails({ 'lease-duration': '5s' }, /--renew-deadline shorter than --lease-duration/);
    fails({ 'retry-period': 'soon' }, /--retry-period: "soon" is not a duration/);
    fails({ 'publish-service': 'a/b/c' }, /--publish-service must be NAME or NAMESPACE\/NAME/);
    fails({ 'dataplane-cert-file': '/tls/tls.crt' }, /--dataplane-cert-file and --dataplane-key-file go together/);
    fails({ 'health-port': '70000' }, /--health-port must be a port number/);
    fails({ 'webhook-port': '0' }, /--webhook-port must be a port number/);
    fails({ 'webhook-key-file': '/tls/tls.key' }, /--webhook-cert-file and --webhook-key-file go together/);
    fails({ 'webhook-cert-file': '/a', 'webhook-key-file': '/b', 'webhook-secret': 's' }, /--webhook-secret or --webhook-cert-file, not both/);
    fails({ 'webhook-generate-certificate': 'true' }, /--webhook-generate-certificate needs --webhook-secret/);
    fails({ 'webhook-service': 'a/b/c' }, /--webhook-service must be NAME or NAMESPACE\/NAME/);
  });
});
