import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { kubeTool } from '../support/kube-tools.ts';

/**
 * The chart rendered by the real helm: one `helm template` per value set,
 * shared by every spec file in the run, and the manifests as plain objects.
 */

export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const chartDirectory = join(projectRoot, 'chart');
export const releaseName = 'edge';
export const releaseNamespace = 'ingress';

export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function helm(args: readonly string[]): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    execFile(kubeTool('helm'), args, { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, HELM_CACHE_HOME: join(tmpdir(), 'helm-spec-cache') } }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (error && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout, stderr });
    });
  });
}

/** Runs helm with the values written to a file (JSON is YAML), so any value type passes unchanged. */
export async function helmWithValues(args: readonly string[], values: object): Promise<HelmResult> {
  const dir = await mkdtemp(join(tmpdir(), 'chart-values-'));
  try {
    const file = join(dir, 'values.yaml');
    await writeFile(file, JSON.stringify(values));
    return await helm([...args, '-f', file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export class RenderedChart {
  readonly manifests: readonly Manifest[];

  constructor(manifests: readonly Manifest[]) {
    this.manifests = manifests;
  }

  all(kind: string): Manifest[] {
    return this.manifests.filter((manifest) => manifest.kind === kind);
  }

  /** The only manifest of the kind (whose name ends with `suffix` when given); throws otherwise. */
  one(kind: string, suffix = ''): Manifest {
    const found = this.all(kind).filter((manifest) => manifest.metadata.name.endsWith(suffix));
    if (found.length !== 1) {
      throw new Error(`expected one ${kind}${suffix ? ` named *${suffix}` : ''}, found ${found.map((m) => m.metadata.name).join(', ') || 'none'}`);
    }
    return found[0]!;
  }
}

/** The manifests of `helm template` output. */
export function renderedChart(stdout: string): RenderedChart {
  return new RenderedChart(loadAll(stdout).filter((document): document is Manifest => document !== null && document !== undefined));
}

const renders = new Map<string, Promise<RenderedChart>>();

/**
 * `helm template` of the chart with these values, as in a cluster that
 * serves `apiVersions` too (cert-manager.io/v1...); the same render runs
 * once per run.
 */
export function renderChart(values: object = {}, apiVersions: readonly string[] = []): Promise<RenderedChart> {
  const key = JSON.stringify([values, apiVersions]);
  let render = renders.get(key);
  if (render === undefined) {
    const args = ['template', releaseName, chartDirectory, '--namespace', releaseNamespace, ...apiVersions.flatMap((version) => ['--api-versions', version])];
    render = helmWithValues(args, values).then((result) => {
      if (result.code !== 0) throw new Error(`helm template failed with ${JSON.stringify(values)}:\n${result.stderr}`);
      return renderedChart(result.stdout);
    });
    renders.set(key, render);
  }
  return render;
}

/** The value sets the specs render the chart under. */
export const valueSets = {
  defaults: {},
  haproxyOff: { haproxy: { enabled: false } },
  haproxyOffPublished: { haproxy: { enabled: false }, controller: { publishService: 'edge/lb' } },
  nodePort: { haproxy: { service: { type: 'NodePort', nodePorts: { http: 30080, https: 30443, stats: 30404 } } } },
  dataplaneTls: { dataplane: { tls: { enabled: true, secretName: 'dataplane-tls', clientSecretName: 'controller-client-tls', serverName: 'haproxy.edge.svc' } } },
  serviceMonitor: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } } },
  networkPolicy: { networkPolicy: { enabled: true } },
  webhookOwnSecret: { webhook: { failurePolicy: 'Fail', certificate: { source: 'secret', secretName: 'hook-tls' } } },
  webhookOff: { webhook: { enabled: false } },
  extendedConfig: {
    controller: {
      config: {
        extend: {
          templateValues: { httpPort: 8080 },
          dataplane: { port: 5556 },
          podSelector: { matchLabels: { 'example.com/fleet': 'edge' } },
          watchedResources: { configmaps: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'apps' } },
        },
      },
    },
  },
} as const;
