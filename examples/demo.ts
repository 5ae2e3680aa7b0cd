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
 * examples/manifests (Ingresses), or with `gateway-api` on
 * examples/gateway-api (the same shop as a Gateway and an HTTPRoute), with
 * the shipped configuration. Ctrl-C stops it all.
 */
const variants = {
  ingress: {
    folder: 'manifests',
    tries: [
      "  curl -H 'Host: shop.example.com' localhost:18080/        # web, two endpoints in turn",
      "  curl -H 'Host: shop.example.com' localhost:18080/api/x   # api",
      '  curl localhost:18080/blog/                                # blog, any host',
    ],
    edits: 'add an endpoint on port 18085, a path, an Ingress',
  },
  'gateway-api': {
    folder: 'gateway-api',
    tries: [
      "  curl -H 'Host: shop.example.com' localhost:18080/          # web, two endpoints in turn",
      "  curl -H 'Host: shop.example.com' localhost:18080/api/x     # api, one request in ten api-canary (port 18084)",
      "  curl -H 'Host: shop.example.com' localhost:18080/health    # api, Exact path",
    ],
    edits: "change the canary's weights, add an HTTPRoute to a Service",
  },
} as const;
const chosen = process.argv[2] ?? 'ingress';
if (!Object.hasOwn(variants, chosen)) {
  processOutput.err(`usage: npm run demo [-- ingress|gateway-api]\nunknown demo: ${chosen}\n`);
  process.exit(2);
}
const variant = variants[chosen as keyof typeof variants];
const manifests = fileURLToPath(new URL(variant.folder, import.meta.url));
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
processOutput.out(['', 'Try:', ...variant.tries, `Then edit ${manifests}/*.yaml (${variant.edits}) and watch the log.`, ''].join('\n'));
await terminationRequested();
processOutput.out('stopping HAProxy, the controller and the backends\n');
await mode.stop();
await tracing?.shutdown();
await backends.stop();
