/**
 * Server-side defaults of the built-in kinds whose defaulted fields the
 * controller reads, as Kubernetes' defaulting and strategies set them on
 * every write: a test object without them looks like what the controller
 * will meet in a cluster, not like the manifest a user wrote.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from './resource-types.ts';

type Fields = Record<string, unknown>;

function fields(value: unknown): Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Fields) } : {};
}

/** The name label selectors rely on, the `kubernetes` finalizer, phase Active. */
export function namespaceDefaults(namespace: KubeObject): void {
  const metadata = fields(namespace.metadata);
  metadata['labels'] = { ...fields(metadata['labels']), 'kubernetes.io/metadata.name': metadata['name'] };
  namespace.metadata = metadata;
  const spec = fields(namespace['spec']);
  namespace['spec'] = { ...spec, finalizers: spec['finalizers'] ?? ['kubernetes'] };
  const status = fields(namespace['status']);
  namespace['status'] = { ...status, phase: status['phase'] ?? 'Active' };
}

/** `stringData` is write-only: merged into base64 `data` and dropped. */
export function secretDefaults(secret: KubeObject): void {
  secret['type'] ??= 'Opaque';
  const plain = secret['stringData'];
  if (plain === undefined) return;
  delete secret['stringData'];
  const data = fields(secret['data']);
  for (const [key, value] of Object.entries(fields(plain))) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  secret['data'] = data;
}

/** A stable address in the default service range 10.96.0.0/12 for the Service, as if the allocator had picked it. */
function clusterIpFor(service: KubeObject): string {
  const metadata = fields(service.metadata);
  const digest = createHash('sha256')
    .update(`${String(metadata['namespace'])}/${String(metadata['name'])}`)
    .digest();
  const offset = (digest.readUInt32BE(0) % ((1 << 20) - 2)) + 1;
  return `10.${96 + (offset >> 16)}.${(offset >> 8) & 0xff}.${offset & 0xff}`;
}

function portDefaults(ports: unknown, defaultTarget: boolean): unknown {
  if (!Array.isArray(ports)) return ports;
  return ports.map((port: unknown) => {
    const entry = fields(port);
    entry['protocol'] ??= 'TCP';
    if (defaultTarget) entry['targetPort'] ??= entry['port'];
    return entry;
  });
}

/**
 * type ClusterIP, protocol TCP, targetPort = port, session affinity None, a
 * cluster IP (kept across updates that leave it out, as the Service
 * strategy does) and the single-stack IPv4 family fields. Node ports are
 * not allocated.
 */
export function serviceDefaults(service: KubeObject, old: KubeObject | undefined): void {
  const spec = fields(service['spec']);
  spec['type'] ??= 'ClusterIP';
  spec['sessionAffinity'] ??= 'None';
  if (spec['ports'] !== undefined) spec['ports'] = portDefaults(spec['ports'], true);
  if (spec['type'] !== 'ExternalName') {
    const stored = fields(old?.['spec'])['clusterIP'];
    spec['clusterIP'] ??= stored ?? clusterIpFor(service);
    spec['clusterIPs'] ??= [spec['clusterIP']];
    spec['ipFamilies'] ??= ['IPv4'];
    spec['ipFamilyPolicy'] ??= 'SingleStack';
    spec['internalTrafficPolicy'] ??= 'Cluster';
  }
  if (spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer') spec['externalTrafficPolicy'] ??= 'Cluster';
  service['spec'] = spec;
}

/** Ports default to TCP. */
export function endpointSliceDefaults(slice: KubeObject): void {
  if (slice['ports'] !== undefined) slice['ports'] = portDefaults(slice['ports'], false);
}
