import type { Manifest } from './helm.ts';

/** Typed reads of the rendered manifests the chart specs look into. */

export interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
  readonly tcpSocket?: { readonly port: string | number };
}

export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly fieldRef?: { readonly fieldPath: string };
    readonly secretKeyRef?: { readonly name: string; readonly key: string };
  };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly EnvVar[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number; readonly protocol?: string }[];
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
  readonly securityContext?: Record<string, unknown>;
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly readOnly?: boolean }[];
  readonly workingDir?: string;
}

export interface Volume {
  readonly name: string;
  readonly emptyDir?: { readonly medium?: string; readonly sizeLimit?: string };
  readonly configMap?: { readonly name: string; readonly items?: readonly { key: string; path: string; mode?: number }[] };
  readonly secret?: { readonly secretName: string; readonly items?: readonly { key: string; path: string }[] };
}

export interface PodSpec {
  readonly serviceAccountName?: string;
  readonly automountServiceAccountToken?: boolean;
  readonly securityContext?: Record<string, unknown>;
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes?: readonly Volume[];
}

export interface Workload extends Manifest {
  readonly spec: {
    readonly replicas?: number;
    readonly selector: { readonly matchLabels: Record<string, string> };
    readonly template: { readonly metadata: { readonly labels: Record<string, string>; readonly annotations?: Record<string, string> }; readonly spec: PodSpec };
  };
}

export interface ServicePort {
  readonly name: string;
  readonly port: number;
  readonly targetPort: string | number;
  readonly nodePort?: number;
  readonly protocol?: string;
}

export interface ServiceManifest extends Manifest {
  readonly spec: { readonly type?: string; readonly clusterIP?: string; readonly selector: Record<string, string>; readonly ports: readonly ServicePort[] };
}

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

export interface RoleManifest extends Manifest {
  readonly rules: readonly PolicyRule[];
}

export interface BindingManifest extends Manifest {
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects: readonly { readonly kind: string; readonly name: string; readonly namespace?: string }[];
}

export function workloads(manifests: readonly Manifest[]): Workload[] {
  return manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'StatefulSet') as Workload[];
}

/** Whether a selector's labels all appear, equal, among the labels. */
export function selects(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value);
}

export function container(workload: Workload, name: string): Container {
  const found = workload.spec.template.spec.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`${workload.kind} ${workload.metadata.name} has no container ${name}`);
  return found;
}

export function envValue(c: Container, name: string): string | undefined {
  return c.env?.find((variable) => variable.name === name)?.value;
}

export function env(c: Container, name: string): EnvVar {
  const found = c.env?.find((variable) => variable.name === name);
  if (found === undefined) throw new Error(`container ${c.name} has no environment variable ${name}`);
  return found;
}

export function mountPath(c: Container, volume: string): string | undefined {
  return c.volumeMounts?.find((mount) => mount.name === volume)?.mountPath;
}

/** The `key:` of a ConfigMap. */
export function configMapData(configMap: Manifest, key: string): string {
  const data = configMap['data'] as Record<string, string> | undefined;
  const value = data?.[key];
  if (value === undefined) throw new Error(`ConfigMap ${configMap.metadata.name} has no ${key}`);
  return value;
}

/** Verbs granted per "group/resource[#name,...]", the way a reviewer reads a role. */
export function grants(rules: readonly PolicyRule[]): Record<string, string[]> {
  const granted: Record<string, string[]> = {};
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = `${group === '' ? 'core' : group}/${resource}${rule.resourceNames ? `#${rule.resourceNames.join(',')}` : ''}`;
        granted[key] = [...new Set([...(granted[key] ?? []), ...rule.verbs])].sort();
      }
    }
  }
  return granted;
}
