import type { KubeConnection } from '../kube/kube-connection.ts';
import type { LoadBalancerIngress } from '../kube/ingress-status.ts';
import { kubeRequest } from '../kube/kube-request.ts';
import { objectPath } from '../kube/resource-path.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { errorMessage } from '../error-message.ts';
import { GATEWAY_GROUP, KINDS } from './api.ts';
import { conditionTime } from './conditions.ts';
import type { GatewayApiModel } from './gateway-api.ts';
import { backendTlsPolicyStatus, gatewayClassStatus, gatewayStatus, listenerSetStatus, NOTHING_LEFT_OUT, routeStatus, type Deployment, type LeftOut } from './status.ts';
import { ancestorsOf, gatewaysByPort } from './backend-tls-policy.ts';

const API_VERSION = `${GATEWAY_GROUP}/v1`;
/** Status writes in flight at once, as for Ingress status (lib/kube/ingress-status-writer.ts). */
const PARALLEL_WRITES = 8;

export interface StatusWrite {
  readonly resource: 'gatewayclasses' | 'gateways' | 'listenersets' | 'httproutes' | 'grpcroutes' | 'tlsroutes' | 'tcproutes' | 'backendtlspolicies';
  readonly object: KubeObject;
  readonly status: Readonly<Record<string, unknown>>;
}

export interface StatusInputs {
  readonly model: GatewayApiModel;
  readonly controllerName: string;
  /** The HAProxy Service's published addresses (lib/kube/ingress-status.ts publishedAddresses). */
  readonly addresses: readonly LoadBalancerIngress[];
  readonly deployment: Deployment;
  readonly now: number;
  /** What the routing model left out of each route as not routed yet; none when absent. */
  readonly leftOut?: ReadonlyMap<KubeObject, LeftOut>;
  /**
   * An object of the model as stored now, whose status a write replaces
   * (other controllers' entries kept, its resourceVersion carried), or
   * undefined for one not to write now. Each object as the model read it
   * when absent.
   */
  readonly current?: (resource: StatusWrite['resource'], object: KubeObject) => KubeObject | undefined;
}

/** The writes that would bring every object's status to what the model says: only those whose status differs. */
export function statusWrites({ model, controllerName, addresses, deployment, now, leftOut, current = (_, object) => object }: StatusInputs): StatusWrite[] {
  const time = conditionTime(now);
  const writes: StatusWrite[] = [];
  const add = (resource: StatusWrite['resource'], read: KubeObject, statusOf: (object: KubeObject) => Readonly<Record<string, unknown>>) => {
    const object = current(resource, read);
    if (object === undefined) return;
    const status = statusOf(object);
    if (JSON.stringify(object['status'] ?? {}) !== JSON.stringify(status)) writes.push({ resource, object, status });
  };
  for (const read of model.classes.values()) add('gatewayclasses', read.object, (object) => gatewayClassStatus(object, read, time));
  for (const outcome of model.gateways.values()) {
    const [resource, statusOf] = outcome.listenerSet ? (['listenersets', listenerSetStatus] as const) : (['gateways', gatewayStatus] as const);
    add(resource, outcome.object, (object) => statusOf(object === outcome.object ? outcome : { ...outcome, object }, addresses, deployment, time));
  }
  for (const outcome of model.routes.values()) {
    const left = leftOut?.get(outcome.object) ?? NOTHING_LEFT_OUT;
    add(outcome.kind === KINDS.grpcRoute ? 'grpcroutes' : 'httproutes', outcome.object, (object) =>
      routeStatus(object === outcome.object ? outcome : { ...outcome, object }, controllerName, time, left),
    );
  }
  for (const outcome of model.l4Routes.values()) {
    add(outcome.kind === KINDS.tlsRoute ? 'tlsroutes' : 'tcproutes', outcome.object, (object) =>
      routeStatus(object === outcome.object ? outcome : { ...outcome, object }, controllerName, time),
    );
  }
  if (model.backendTls.outcomes.length > 0) {
    // TLSRoutes through Terminate alone speak TLS to their backends as a policy says (l4-model.ts).
    const terminated = [...model.l4Routes.values()].map((outcome) => ({ ...outcome, records: outcome.records.filter((record) => record.mode === 'tls-terminate') }));
    const byPort = gatewaysByPort([...model.routes.values(), ...terminated]);
    for (const outcome of model.backendTls.outcomes) {
      const ancestors = ancestorsOf(outcome, byPort);
      const object = current('backendtlspolicies', outcome.object);
      const status = object && backendTlsPolicyStatus({ ...outcome, object }, ancestors, controllerName, time);
      if (object && status && JSON.stringify(object['status'] ?? {}) !== JSON.stringify(status)) writes.push({ resource: 'backendtlspolicies', object, status });
    }
  }
  return writes;
}

/**
 * Writes Gateway API status through the status subresource. Each write
 * carries the resourceVersion it was computed from: when the object changed
 * meanwhile (another controller wrote its own entry of an HTTPRoute's
 * shared status.parents, say), the API server refuses it with 409 and the
 * next round computes it again from the newer object, rather than this one
 * overwriting what it did not see.
 */
export class GatewayStatusWriter {
  readonly #kubeConnection: KubeConnection;

  constructor(kubeConnection: KubeConnection) {
    this.#kubeConnection = kubeConnection;
  }

  /** Resolves to the number of objects written; one failed write does not stop the others, and all failures are reported together. */
  async write(writes: readonly StatusWrite[]): Promise<number> {
    let next = 0;
    const failed: string[] = [];
    const worker = async () => {
      while (next < writes.length) {
        const { resource, object, status } = writes[next++]!;
        // At the version the object was read at: a cluster of an older Gateway API release serves TLSRoutes and TCPRoutes as v1alpha2 alone.
        const apiVersion = typeof object.apiVersion === 'string' && object.apiVersion.startsWith(`${GATEWAY_GROUP}/`) ? object.apiVersion : API_VERSION;
        const path = objectPath(apiVersion, resource, object.metadata.namespace, object.metadata.name, 'status');
        try {
          await kubeRequest(this.#kubeConnection, { method: 'PATCH', path, body: { metadata: { resourceVersion: object.metadata.resourceVersion }, status } });
        } catch (error) {
          failed.push(`${resource} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}: ${errorMessage(error)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_WRITES, writes.length) }, worker));
    if (failed.length > 0) throw new Error(`${failed.length} status write(s) failed: ${failed.slice(0, 3).join('; ')}${failed.length > 3 ? '; ...' : ''}`);
    return writes.length;
  }
}
