import { parseDuration } from '../config/duration.ts';
import type { WebhookSettings } from '../webhook/settings.ts';
import { portValue, UsageError } from './arguments.ts';

/** What `haproxy-template-ic run` needs, resolved from flags, then environment, then defaults. */
export interface RunSettings {
  readonly namespace: string;
  readonly configMap: string;
  readonly credentialsSecret: string;
  readonly identity: string;
  readonly lease: { readonly name: string; readonly durationMs: number; readonly renewDeadlineMs: number; readonly retryMs: number } | undefined;
  readonly publishService: { readonly namespace: string; readonly name: string } | undefined;
  readonly dataplaneTls: { readonly caFile?: string; readonly certFile?: string; readonly keyFile?: string; readonly serverName?: string } | undefined;
  readonly dataplaneContainer: string;
  readonly kubeconfig: string | undefined;
  readonly bindAddress: string;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** Undefined with --no-webhook. */
  readonly webhook: WebhookSettings | undefined;
}

export const runDefaults = {
  configMap: 'haproxy-config',
  credentialsSecret: 'haproxy-template-ic-credentials',
  lease: 'haproxy-template-ic-leader',
  leaseDuration: '15s',
  renewDeadline: '10s',
  retryPeriod: '2s',
  dataplaneContainer: 'dataplaneapi',
  bindAddress: '0.0.0.0',
  healthPort: 8080,
  metricsPort: 9090,
  webhookPort: 9443,
  webhookService: 'haproxy-template-ic',
} as const;

type Values = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

function duration(name: string, text: string): number {
  try {
    const ms = parseDuration(text);
    if (ms <= 0) throw new Error('it must be longer than zero');
    return ms;
  } catch (error) {
    throw new UsageError(`run: --${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Where the webhook gets its certificate and what it is for; every combination that cannot work is a usage error. */
function webhookSettings(
  values: Values,
  text: (name: string, variable?: string) => string | undefined,
  serviceRef: (flag: string, value: string) => { readonly namespace: string; readonly name: string },
): WebhookSettings {
  const certFile = text('webhook-cert-file');
  const keyFile = text('webhook-key-file');
  const secret = text('webhook-secret', 'WEBHOOK_SECRET');
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('run: --webhook-cert-file and --webhook-key-file go together');
  if (certFile !== undefined && secret !== undefined) throw new UsageError('run: the webhook certificate comes from --webhook-secret or --webhook-cert-file, not both');
  if (values['webhook-generate-certificate'] !== undefined && secret === undefined) {
    throw new UsageError('run: --webhook-generate-certificate needs --webhook-secret, the Secret every replica reads it from');
  }
  return {
    port: portValue('run', 'webhook-port', values['webhook-port'], runDefaults.webhookPort),
    certificate:
      certFile !== undefined && keyFile !== undefined
        ? { kind: 'files', certFile, keyFile }
        : secret !== undefined
          ? { kind: 'secret', name: secret, generate: values['webhook-generate-certificate'] === true }
          : { kind: 'generated' },
    service: serviceRef('webhook-service', text('webhook-service', 'WEBHOOK_SERVICE') ?? runDefaults.webhookService),
    configuration: text('webhook-configuration', 'WEBHOOK_CONFIGURATION'),
  };
}

/**
 * Flags win over environment variables (the chart sets POD_NAMESPACE and
 * POD_NAME from the downward API); the namespace may also come from the
 * service account mount. Every inconsistency is a usage error naming the flag.
 */
export function runSettings(values: Values, env: Readonly<Record<string, string | undefined>>, serviceAccountNamespace: string | undefined): RunSettings {
  const text = (name: string, variable?: string): string | undefined => {
    const flag = values[name];
    if (typeof flag === 'string' && flag !== '') return flag;
    const fromEnv = variable === undefined ? undefined : env[variable];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const namespace = text('namespace', 'POD_NAMESPACE') ?? serviceAccountNamespace;
  if (namespace === undefined) throw new UsageError('run: --namespace is required (or POD_NAMESPACE, or running in a pod)');
  const identity = text('identity', 'POD_NAME') ?? env['HOSTNAME'];
  if (identity === undefined || identity === '') throw new UsageError('run: --identity is required (or POD_NAME)');

  const leaderElection = values['no-leader-election'] !== true;
  const lease = leaderElection
    ? {
        name: text('lease', 'LEASE_NAME') ?? runDefaults.lease,
        durationMs: duration('lease-duration', text('lease-duration') ?? runDefaults.leaseDuration),
        renewDeadlineMs: duration('renew-deadline', text('renew-deadline') ?? runDefaults.renewDeadline),
        retryMs: duration('retry-period', text('retry-period') ?? runDefaults.retryPeriod),
      }
    : undefined;
  if (lease && !(lease.retryMs < lease.renewDeadlineMs && lease.renewDeadlineMs < lease.durationMs)) {
    throw new UsageError('run: --retry-period must be shorter than --renew-deadline, and --renew-deadline shorter than --lease-duration');
  }

  /** A Service named NAME (in the controller's namespace) or NAMESPACE/NAME. */
  const serviceRef = (flag: string, value: string) => {
    const parts = value.split('/');
    if (parts.length > 2 || parts.some((part) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(part))) {
      throw new UsageError(`run: --${flag} must be NAME or NAMESPACE/NAME, got ${JSON.stringify(value)}`);
    }
    return parts.length === 2 ? { namespace: parts[0]!, name: parts[1]! } : { namespace, name: parts[0]! };
  };
  const publish = text('publish-service', 'PUBLISH_SERVICE');
  const publishService: RunSettings['publishService'] = publish === undefined ? undefined : serviceRef('publish-service', publish);

  const caFile = text('dataplane-ca-file');
  const certFile = text('dataplane-cert-file');
  const keyFile = text('dataplane-key-file');
  const serverName = text('dataplane-server-name');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new UsageError('run: --dataplane-cert-file and --dataplane-key-file go together');
  }
  const tls = { ...(caFile ? { caFile } : {}), ...(certFile ? { certFile } : {}), ...(keyFile ? { keyFile } : {}), ...(serverName ? { serverName } : {}) };

  const webhook = values['no-webhook'] === true ? undefined : webhookSettings(values, text, serviceRef);

  return {
    namespace,
    configMap: text('configmap', 'CONFIGMAP_NAME') ?? runDefaults.configMap,
    credentialsSecret: text('secret', 'CREDENTIALS_SECRET_NAME') ?? runDefaults.credentialsSecret,
    identity,
    lease,
    publishService,
    dataplaneTls: Object.keys(tls).length > 0 ? tls : undefined,
    dataplaneContainer: text('dataplane-container') ?? runDefaults.dataplaneContainer,
    kubeconfig: text('kubeconfig'),
    bindAddress: text('bind-address') ?? runDefaults.bindAddress,
    healthPort: portValue('run', 'health-port', values['health-port'], runDefaults.healthPort),
    metricsPort: portValue('run', 'metrics-port', values['metrics-port'], runDefaults.metricsPort),
    webhook,
  };
}
