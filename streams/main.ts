#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine, portValue, usage, UsageError, type CommandSpec } from '../lib/cli/arguments.ts';
import { processOutput } from '../lib/cli/output.ts';
import { terminationRequested } from '../lib/cli/termination.ts';
import { defaultConfigPath, packageVersion } from '../lib/cli/package-root.ts';
import { annotationsCommand } from '../lib/cli/annotations-command.ts';
import { renderCommand } from '../lib/cli/render-command.ts';
import { validateCommand } from '../lib/cli/validate-command.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { runDefaults, runSettings } from '../lib/cli/run-settings.ts';
import { heapPlan, nodeFlags } from '../lib/container/heap-plan.ts';
import { serviceAccountNamespace } from '../lib/kube/service-account.ts';
import { logSettingsFromEnvironment, type Logger } from '../lib/telemetry/logger.ts';
import { tracingRequested } from '../lib/telemetry/tracing-environment.ts';
import { errorMessage } from '../lib/error-message.ts';
import { startClusterMode } from './cluster-mode.ts';
import { startLocalMode } from './local-mode.ts';

/** The composition root: parses the command line and runs one command. */

const configOption = {
  type: 'string',
  description: 'The controller configuration (YAML).',
  defaultText: 'the shipped templates/config.yaml',
} as const;

const commands: readonly CommandSpec[] = [
  {
    name: 'render',
    summary: 'Render Kubernetes manifests into haproxy.cfg, maps, certificates and files.',
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests (every file, multi-document).' },
      out: { type: 'string', description: 'The directory to write into; it is also the base directory of the render.' },
      config: configOption,
    },
  },
  {
    name: 'local',
    summary: 'Run the controller on a folder of manifests against a HAProxy on this machine.',
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests, watched for changes.' },
      config: { ...configOption, description: 'The controller configuration (YAML), watched for changes.' },
      'work-dir': { type: 'string', description: "HAProxy's directory: haproxy.cfg, maps/, ssl/, general/, sockets.", defaultText: '<temp dir>/haproxy-template-ic-local' },
      'bind-address': { type: 'string', description: 'The address HAProxy binds.', defaultText: '127.0.0.1' },
      'http-port': { type: 'string', description: 'HAProxy HTTP port.', defaultText: '18080' },
      'https-port': { type: 'string', description: 'HAProxy HTTPS port (used when TLS Secrets exist).', defaultText: '18443' },
      'status-port': { type: 'string', description: 'HAProxy status port (/healthz, /ready, /stats).', defaultText: '18404' },
      'health-port': { type: 'string', description: 'Controller /healthz and /readyz.', defaultText: '8080' },
      'metrics-port': { type: 'string', description: 'Controller /metrics.', defaultText: '9090' },
      'dataplane-url': {
        type: 'string',
        multiple: true,
        description: 'Deploy to this HAProxy Data Plane API (repeatable) instead of a HAProxy on this machine.',
      },
      'dataplane-user': { type: 'string', description: 'Data Plane API user.' },
      'dataplane-password-file': { type: 'string', description: 'File holding the Data Plane API password.' },
      'keep-haproxy': {
        type: 'boolean',
        description:
          'Leave HAProxy serving when the controller stops (SIGINT, SIGTERM), for the next controller on the same --work-dir to attach to. Without it, stopping the controller stops HAProxy.',
      },
    },
  },
  {
    name: 'run',
    summary: 'Run the controller in a Kubernetes cluster (in-cluster credentials, or KUBECONFIG outside).',
    options: {
      namespace: { type: 'string', description: "Namespace of the controller's ConfigMap, Secret, Lease and the HAProxy pods.", defaultText: "POD_NAMESPACE, or the pod's own namespace" },
      configmap: { type: 'string', description: 'ConfigMap holding the controller configuration under config.yaml (env CONFIGMAP_NAME).', defaultText: runDefaults.configMap },
      secret: {
        type: 'string',
        description: 'Secret with the Data Plane API credentials, keys dataplane_username and dataplane_password (env CREDENTIALS_SECRET_NAME).',
        defaultText: runDefaults.credentialsSecret,
      },
      identity: { type: 'string', description: "This replica's name for leader election and events.", defaultText: 'POD_NAME' },
      lease: { type: 'string', description: 'Lease used for leader election (env LEASE_NAME).', defaultText: runDefaults.lease },
      'lease-duration': { type: 'string', description: 'How long a lease holds without renewal.', defaultText: runDefaults.leaseDuration },
      'renew-deadline': { type: 'string', description: 'A leader that cannot renew for this long steps down.', defaultText: runDefaults.renewDeadline },
      'retry-period': { type: 'string', description: 'How often replicas try to take or renew the lease.', defaultText: runDefaults.retryPeriod },
      'no-leader-election': { type: 'boolean', description: 'Deploy without a lease (a single replica only).' },
      'publish-service': { type: 'string', description: 'NAME or NAMESPACE/NAME of the HAProxy Service whose address Ingress status carries (env PUBLISH_SERVICE).' },
      'dataplane-ca-file': { type: 'string', description: 'CA bundle for HTTPS to the Data Plane API.' },
      'dataplane-cert-file': { type: 'string', description: 'Client certificate for mutual TLS to the Data Plane API.' },
      'dataplane-key-file': { type: 'string', description: 'Key of the client certificate.' },
      'dataplane-server-name': { type: 'string', description: 'Name the Data Plane API certificate is checked against (pods are reached by IP).' },
      'dataplane-container': { type: 'string', description: 'Container of HAProxy pods whose readiness means the Data Plane API is up.', defaultText: runDefaults.dataplaneContainer },
      kubeconfig: { type: 'string', description: 'A kubeconfig file.', defaultText: 'KUBECONFIG, ~/.kube/config, or in-cluster credentials' },
      'bind-address': { type: 'string', description: 'Address of the health and metrics servers.', defaultText: runDefaults.bindAddress },
      'health-port': { type: 'string', description: 'Controller /healthz and /readyz.', defaultText: String(runDefaults.healthPort) },
      'metrics-port': { type: 'string', description: 'Controller /metrics.', defaultText: String(runDefaults.metricsPort) },
      'webhook-port': {
        type: 'string',
        description: 'HTTPS port of the validating admission webhook (POST /validate, GET /healthz), served by every replica.',
        defaultText: String(runDefaults.webhookPort),
      },
      'no-webhook': { type: 'boolean', description: 'Serve no admission webhook.' },
      'webhook-cert-file': { type: 'string', description: "The webhook's serving certificate (PEM), re-read when it changes." },
      'webhook-key-file': { type: 'string', description: 'Its private key.' },
      'webhook-secret': {
        type: 'string',
        description: "A kubernetes.io/tls Secret of --namespace holding the webhook's certificate (tls.crt, tls.key, ca.crt), followed as it changes (env WEBHOOK_SECRET).",
        defaultText: 'a certificate generated in memory at start',
      },
      'webhook-generate-certificate': {
        type: 'boolean',
        description: 'Generate a CA and certificate into --webhook-secret when it does not exist, and renew them, so every replica serves the same one.',
      },
      'webhook-service': {
        type: 'string',
        description: 'NAME or NAMESPACE/NAME of the Service the API server calls the webhook through: the names of a generated certificate (env WEBHOOK_SERVICE).',
        defaultText: runDefaults.webhookService,
      },
      'webhook-configuration': {
        type: 'string',
        description:
          "The ValidatingWebhookConfiguration whose caBundle the controller keeps equal to its certificate's CA (env WEBHOOK_CONFIGURATION); leave out when cert-manager's CA injector does it.",
      },
    },
  },
  {
    name: 'validate',
    summary: "Run the configuration's validationTests and print a table of results.",
    options: { config: configOption },
  },
  {
    name: 'annotations',
    summary:
      "Report what each Ingress's haproxy.org/ and nginx.ingress.kubernetes.io/ annotations will do here: honoured, ignored and why, invalid and why, basic-auth users who cannot log in, and a summary by annotation.",
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests (every file, multi-document); auth Secrets are looked up among them.' },
      kubeconfig: { type: 'string', description: 'A kubeconfig file: read the Ingresses (and the auth Secrets they name) from its current cluster instead.' },
      namespace: { type: 'string', description: 'With --kubeconfig: only the Ingresses of this namespace.', defaultText: 'all namespaces' },
      config: {
        ...configOption,
        description: 'The controller configuration (YAML): the class it serves (ingress.className) and the namespaces that share hosts (ingress.sharedHostNamespaces).',
      },
    },
  },
  { name: 'version', summary: 'Print the version and exit.', options: {} },
];

function required(command: string, values: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    if (typeof values[name] !== 'string' || values[name] === '') throw new UsageError(`${command}: --${name} is required`);
  }
}

/** How long shutdown may take before the process exits regardless: inside Kubernetes' default 30 s grace period. */
const SHUTDOWN_LIMIT_MS = 20_000;

/**
 * While a mode runs: an exception nothing caught, or a promise rejection
 * nothing handled, leaves the process in a state nobody planned for. It is
 * logged with its stack, the mode is stopped as far as it can be within the
 * shutdown limit, and the process exits 1, for whatever runs it
 * (Kubernetes, systemd, a shell loop) to start it anew. A second one while
 * stopping ends the process at once (Node's own default: the stack on
 * stderr, exit 1), as does one before a mode runs.
 */
function exitOnCrash(log: Logger, stop: () => Promise<void>): void {
  const crashed = (what: string) => async (error: unknown) => {
    process.off('uncaughtException', exception);
    process.off('unhandledRejection', rejection);
    log.fatal({ err: error }, `${what}: ${errorMessage(error)}; stopping and exiting 1`);
    setTimeout(() => process.exit(1), SHUTDOWN_LIMIT_MS).unref();
    try {
      await stop();
    } catch (failure) {
      log.error(`stopping after the ${what} failed: ${errorMessage(failure)}`);
    }
    process.exit(1);
  };
  const exception = crashed('uncaught exception');
  const rejection = crashed('unhandled promise rejection');
  process.on('uncaughtException', exception);
  process.on('unhandledRejection', rejection);
}

/** Runs local mode until SIGINT or SIGTERM, then stops HAProxy (unless --keep-haproxy) and exits 0. */
async function runLocal(values: Record<string, string | boolean | string[] | undefined>): Promise<number> {
  const text = (name: string) => values[name] as string | undefined;
  const port = (name: string, fallback: number) => portValue('local', name, values[name], fallback);
  const urls = (values['dataplane-url'] as string[] | undefined) ?? [];
  for (const url of urls) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`local: --dataplane-url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  }
  const keepHaproxy = values['keep-haproxy'] === true;
  if (keepHaproxy && urls.length > 0) throw new UsageError('local: --keep-haproxy is for a HAProxy on this machine, not with --dataplane-url');
  const passwordFile = text('dataplane-password-file');
  if ((passwordFile !== undefined || text('dataplane-user') !== undefined) && urls.length === 0) {
    throw new UsageError('local: --dataplane-user and --dataplane-password-file need --dataplane-url');
  }
  let password: string | undefined;
  if (passwordFile !== undefined) {
    // The file's content is the password; a trailing newline from an editor is not part of it.
    password = (
      await readFile(passwordFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(`local: --dataplane-password-file ${passwordFile}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
      })
    ).replace(/\r?\n$/, '');
  }
  const log = logSettingsFromEnvironment(process.env, process.stdout);
  // The SDK is loaded only when an OTLP endpoint asks for traces: without one, tracing costs nothing.
  const tracing = tracingRequested(process.env) ? (await import('../lib/telemetry/tracing-sdk.ts')).startTracing(packageVersion()) : undefined;
  for (const note of tracing?.settings.notes ?? []) processOutput.err(`haproxy-template-ic: ${note}\n`);
  const mode = await startLocalMode({
    manifests: text('manifests')!,
    config: { path: text('config') ?? defaultConfigPath(), watch: text('config') !== undefined },
    workDir: text('work-dir') ?? join(tmpdir(), 'haproxy-template-ic-local'),
    bindAddress: text('bind-address') ?? '127.0.0.1',
    httpPort: port('http-port', 18080),
    httpsPort: port('https-port', 18443),
    statusPort: port('status-port', 18404),
    healthPort: port('health-port', 8080),
    metricsPort: port('metrics-port', 9090),
    ...(urls.length > 0
      ? { dataplane: { urls, ...(text('dataplane-user') !== undefined ? { username: text('dataplane-user')! } : {}), ...(password !== undefined ? { password } : {}) } }
      : {}),
    output: processOutput,
    log,
    ...(tracing ? { tracerProvider: tracing.provider } : {}),
  }).catch(async (error: unknown) => {
    await tracing?.shutdown();
    throw error;
  });
  // HAProxy keeps serving what it has: the controller started again attaches to it.
  exitOnCrash(mode.observer.logger, async () => {
    await mode.stop({ keepHaproxy: mode.target !== undefined });
    await tracing?.shutdown();
  });
  const signal = await terminationRequested();
  mode.observer.logger.info(`${signal}: stopping ${keepHaproxy ? 'the controller' : 'HAProxy and the controller'}`);
  await mode.stop({ keepHaproxy });
  // Spans still queued are exported before the process ends.
  await tracing?.shutdown();
  return 0;
}

/** Runs in a cluster until SIGTERM (or SIGINT), then releases the lease and exits 0. */
async function runInCluster(values: Record<string, string | boolean | string[] | undefined>): Promise<number> {
  const settings = runSettings(values, process.env, await serviceAccountNamespace());
  const plan = heapPlan(process.env, undefined, process.execArgv);
  const flags = nodeFlags(plan, process.env, process.execArgv);
  if (flags.length > 0) {
    // V8 sizes its heap once, at start: the same process image again (same pid under tini), with the flags.
    process.execve!(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
  }
  const kubeConfig = new KubeConfig();
  try {
    if (settings.kubeconfig !== undefined) kubeConfig.loadFromFile(settings.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new UsageError(`run: ${settings.kubeconfig !== undefined ? `--kubeconfig ${settings.kubeconfig}` : 'kubeconfig'}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const log = logSettingsFromEnvironment(process.env, process.stdout);
  const tracing = tracingRequested(process.env) ? (await import('../lib/telemetry/tracing-sdk.ts')).startTracing(packageVersion()) : undefined;
  for (const note of tracing?.settings.notes ?? []) processOutput.err(`haproxy-template-ic: ${note}\n`);
  const mode = await startClusterMode({ ...settings, kubeConfig, output: processOutput, log, notes: [plan.message], ...(tracing ? { tracerProvider: tracing.provider } : {}) }).catch(
    async (error: unknown) => {
      await tracing?.shutdown();
      throw error;
    },
  );
  exitOnCrash(mode.observer.logger, async () => {
    await mode.stop();
    await tracing?.shutdown();
  });
  const signal = await terminationRequested();
  mode.observer.logger.info(`${signal}: stopping the controller and releasing the lease`);
  const forced = setTimeout(() => {
    mode.observer.logger.error(`shutdown took longer than ${SHUTDOWN_LIMIT_MS / 1000} s; exiting`);
    process.exit(1);
  }, SHUTDOWN_LIMIT_MS);
  forced.unref();
  await mode.stop();
  await tracing?.shutdown();
  clearTimeout(forced);
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const invocation = parseCommandLine(commands, argv);
    if (invocation.kind === 'help') {
      processOutput.out(`${invocation.text}\n`);
      return 0;
    }
    const values = invocation.values as Record<string, string | undefined>;
    switch (invocation.command) {
      case 'render':
        required('render', values, ['manifests', 'out']);
        return await renderCommand({ manifests: values['manifests']!, out: values['out']!, config: values['config'] }, processOutput);
      case 'validate':
        return await validateCommand({ config: values['config'] }, processOutput);
      case 'annotations':
        return await annotationsCommand({ manifests: values['manifests'], kubeconfig: values['kubeconfig'], namespace: values['namespace'], config: values['config'] }, processOutput);
      case 'local':
        required('local', values, ['manifests']);
        return await runLocal(invocation.values as Record<string, string | boolean | string[] | undefined>);
      case 'run':
        return await runInCluster(invocation.values as Record<string, string | boolean | string[] | undefined>);
      default:
        processOutput.out(`${packageVersion()}\n`);
        return 0;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      processOutput.err(`haproxy-template-ic: ${error.message}\n\n${usage(commands)}\n`);
      return 2;
    }
    processOutput.err(`haproxy-template-ic: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
