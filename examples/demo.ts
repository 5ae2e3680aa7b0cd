import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfigPath, packageVersion } from '../lib/cli/package-root.ts';
import { processOutput } from '../lib/cli/output.ts';
import { terminationRequested } from '../lib/cli/termination.ts';
import { logSettingsFromEnvironment } from '../lib/telemetry/logger.ts';
import { tracingRequested } from '../lib/telemetry/tracing-environment.ts';
import { startLocalMode } from '../streams/local-mode.ts';
import { demoBackendPorts, startBackends } from './backends.ts';

/**
 * The demo: the backends the example manifests point at, and local mode on
 * examples/manifests with the shipped configuration. Ctrl-C stops it all.
 */
const manifests = fileURLToPath(new URL('manifests', import.meta.url));
const backends = await startBackends(demoBackendPorts);
// Like the command: LOG_LEVEL, readable lines on a terminal, traces when an OTLP endpoint is set.
const tracing = tracingRequested(process.env) ? (await import('../lib/telemetry/tracing-sdk.ts')).startTracing(packageVersion()) : undefined;
const mode = await startLocalMode({
  manifests,
  config: { path: defaultConfigPath(), watch: false },
  workDir: join(tmpdir(), 'haproxy-template-ic-demo'),
  bindAddress: '127.0.0.1',
  httpPort: 18080,
  httpsPort: 18443,
  statusPort: 18404,
  healthPort: 8080,
  metricsPort: 9090,
  output: processOutput,
  log: logSettingsFromEnvironment(process.env, process.stdout),
  ...(tracing ? { tracerProvider: tracing.provider } : {}),
});
processOutput.out(
  [
    '',
    'Try:',
    "  curl -H 'Host: shop.example.com' localhost:18080/        # web, two endpoints in turn",
    "  curl -H 'Host: shop.example.com' localhost:18080/api/x   # api",
    '  curl localhost:18080/blog/                                # blog, any host',
    `Then edit ${manifests}/*.yaml (add an endpoint on port 18085, a path, an Ingress) and watch the log.`,
    '',
  ].join('\n'),
);
await terminationRequested();
processOutput.out('stopping HAProxy, the controller and the backends\n');
await mode.stop();
await tracing?.shutdown();
await backends.stop();
