#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine, portValue, usage, UsageError } from '../lib/cli/arguments.ts';
import { processOutput } from '../lib/cli/output.ts';
import { terminationRequested } from '../lib/cli/termination.ts';
import { defaultConfigPath, packageVersion } from '../lib/cli/package-root.ts';
import { runSettings } from '../lib/cli/run-settings.ts';
import { commands } from '../lib/cli/commands.ts';
import { heapPlan, nodeFlags } from '../lib/container/heap-plan.ts';
import { serviceAccountNamespace } from '../lib/kube/service-account.ts';
import { logSettingsFromEnvironment, type Logger } from '../lib/telemetry/logger.ts';
import { tracingRequested } from '../lib/telemetry/tracing-environment.ts';
import { errorMessage } from '../lib/error-message.ts';

/**
 * The composition root: parses the command line and runs one command. Each
 * command's modules are imported when it runs: `run` re-executes Node
 * before it loads the Kubernetes client and the pipeline (most of a second
 * of module loading, which a process about to be replaced would load for
 * nothing), and no command loads another's.
 */

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
  const { startLocalMode } = await import('./local-mode.ts');
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
  const { defaultKubeConnection, kubeConnectionFromFile } = await import('../lib/kube/kube-connection.ts');
  let kubeConnection;
  try {
    kubeConnection = settings.kubeconfig !== undefined ? kubeConnectionFromFile(settings.kubeconfig) : defaultKubeConnection();
  } catch (error) {
    throw new UsageError(`run: ${settings.kubeconfig !== undefined ? `--kubeconfig ${settings.kubeconfig}` : 'kubeconfig'}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const log = logSettingsFromEnvironment(process.env, process.stdout);
  const tracing = tracingRequested(process.env) ? (await import('../lib/telemetry/tracing-sdk.ts')).startTracing(packageVersion()) : undefined;
  for (const note of tracing?.settings.notes ?? []) processOutput.err(`haproxy-template-ic: ${note}\n`);
  const { startClusterMode } = await import('./cluster-mode.ts');
  const mode = await startClusterMode({ ...settings, kubeConnection, output: processOutput, log, notes: [plan.message], ...(tracing ? { tracerProvider: tracing.provider } : {}) }).catch(
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
        return await (await import('../lib/cli/render-command.ts')).renderCommand({ manifests: values['manifests']!, out: values['out']!, config: values['config'] }, processOutput);
      case 'validate':
        return await (await import('../lib/cli/validate-command.ts')).validateCommand({ config: values['config'] }, processOutput);
      case 'annotations':
        return await (
          await import('../lib/cli/annotations-command.ts')
        ).annotationsCommand({ manifests: values['manifests'], kubeconfig: values['kubeconfig'], namespace: values['namespace'], config: values['config'] }, processOutput);
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
