import type { Endpoint, KubeObject } from '../pipeline/model.ts';
import { objectKey } from '../pipeline/object-key.ts';

export interface PodEndpointOptions {
  readonly scheme: 'http' | 'https';
  readonly port: number;
  /** The Data Plane API container, whose readiness decides whether the pod can take deployments. */
  readonly container: string;
}

interface PodShape {
  readonly metadata: { readonly namespace?: string; readonly name: string; readonly deletionTimestamp?: unknown };
  readonly status?: {
    readonly podIP?: string;
    readonly containerStatuses?: readonly { readonly name?: string; readonly ready?: boolean }[];
  };
}

/**
 * The Data Plane API endpoint of a HAProxy pod, or undefined while it cannot
 * take a deployment: no pod IP yet, its Data Plane API container not ready,
 * or the pod terminating. Identity is the pod's namespace/name, so a pod
 * that comes back with a new IP is a new HAProxy instance at the same id.
 */
export function podEndpoint(object: KubeObject, options: PodEndpointOptions): Endpoint | undefined {
  const pod = object as unknown as PodShape;
  const ip = pod.status?.podIP;
  if (ip === undefined || ip === '' || pod.metadata.deletionTimestamp !== undefined) return undefined;
  const ready = pod.status?.containerStatuses?.some((status) => status.name === options.container && status.ready === true);
  if (!ready) return undefined;
  const host = ip.includes(':') ? `[${ip}]` : ip;
  // A pod's hostname is its name, and HAProxy's local peer name is its hostname (src/haproxy.c sets localpeer from gethostname()).
  return { id: objectKey(pod.metadata.namespace, pod.metadata.name), url: `${options.scheme}://${host}:${options.port}`, peer: { name: pod.metadata.name, address: ip } };
}
