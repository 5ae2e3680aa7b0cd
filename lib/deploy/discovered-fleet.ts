import type { ControllerConfig } from '../config/types.ts';
import { DataplaneClient } from '../dataplane/client.ts';
import { Synchroniser, type EndpointStatus } from '../dataplane/synchroniser.ts';
import { sharedPlanner } from '../dataplane/shared-planner.ts';
import type { DataplaneTlsOptions } from '../dataplane/tls.ts';
import type { Endpoint } from '../pipeline/model.ts';
import type { Fleet } from './fleet.ts';

export interface DiscoveredFleetOptions {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly timeoutMs?: number;
  readonly tls?: DataplaneTlsOptions | undefined;
}

export interface DiscoveredFleet extends Fleet {
  /** Drops the synchronisers (and connections) of endpoints no longer discovered. */
  retain(endpoints: readonly Endpoint[]): void;
  statuses(): ReadonlyMap<string, EndpointStatus>;
}

/**
 * Data Plane API endpoints found at run time (HAProxy pods): a client and
 * synchroniser are made the first time an endpoint is deployed to, and a
 * pod that comes back at another address gets fresh ones, since it is a new
 * HAProxy with nothing deployed.
 */
export function discoveredFleet(options: DiscoveredFleetOptions): DiscoveredFleet {
  const targets = new Map<string, { readonly url: string; readonly client: DataplaneClient; readonly sync: Synchroniser }>();
  const plan = sharedPlanner();
  const targetFor = (endpoint: Endpoint) => {
    const known = targets.get(endpoint.id);
    if (known?.url === endpoint.url) return known;
    known?.client.close();
    const client = new DataplaneClient({
      url: endpoint.url,
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
    });
    const target = { url: endpoint.url, client, sync: new Synchroniser({ client, plan }) };
    targets.set(endpoint.id, target);
    return target;
  };
  return {
    endpoints: [],
    prepare: (config: ControllerConfig) => config,
    deploy: (endpoint, files, hash, reason) => targetFor(endpoint).sync.deploy(files, hash, reason),
    describe: () => `deploying to the Data Plane APIs of discovered HAProxy pods (${targets.size} known)`,
    retain: (endpoints) => {
      const current = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.url]));
      for (const [id, target] of targets) {
        if (current.get(id) === target.url) continue;
        target.client.close();
        targets.delete(id);
      }
    },
    statuses: () => new Map([...targets].map(([id, { sync }]) => [id, sync.status])),
    stop: async () => {
      for (const { client } of targets.values()) client.close();
      targets.clear();
    },
  };
}
