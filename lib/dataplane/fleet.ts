import type { ControllerConfig } from '../config/types.ts';
import type { Fleet } from '../deploy/fleet.ts';
import type { Endpoint } from '../pipeline/model.ts';
import { DataplaneClient } from './client.ts';
import { sharedPlanner } from './shared-planner.ts';
import { Synchroniser, type EndpointStatus } from './synchroniser.ts';
import type { DataplaneTlsOptions } from './tls.ts';

export interface DataplaneFleetOptions {
  /** Data Plane API base URLs, e.g. http://10.0.0.5:5555. */
  readonly urls: readonly string[];
  readonly username?: string;
  readonly password?: string;
  readonly timeoutMs?: number;
  readonly tls?: DataplaneTlsOptions;
}

/**
 * HAProxy instances behind Data Plane APIs, each kept in step by its own
 * synchroniser. The configuration is deployed as rendered: the instances
 * have the layout the configuration describes (dataplane.baseDir...).
 */
export function dataplaneFleet(options: DataplaneFleetOptions): Fleet & { readonly statuses: () => ReadonlyMap<string, EndpointStatus> } {
  const endpoints: Endpoint[] = [];
  const synchronisers = new Map<string, { readonly client: DataplaneClient; readonly sync: Synchroniser }>();
  const plan = sharedPlanner();
  for (const url of options.urls) {
    const client = new DataplaneClient({
      url,
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
    });
    // The client's endpoint never carries credentials: safe as an id in logs and metrics.
    const endpoint: Endpoint = { id: client.endpoint, url: client.endpoint };
    endpoints.push(endpoint);
    synchronisers.set(endpoint.id, { client, sync: new Synchroniser({ client, plan }) });
  }
  return {
    endpoints,
    prepare: (config: ControllerConfig) => config,
    deploy: (endpoint, files, hash, reason) => {
      const target = synchronisers.get(endpoint.id);
      if (!target) return Promise.reject(new Error(`unknown Data Plane API endpoint ${endpoint.id}`));
      return target.sync.deploy(files, hash, reason);
    },
    describe: () => `deploying to ${endpoints.length} Data Plane API endpoint(s): ${endpoints.map((e) => e.id).join(', ')}`,
    statuses: () => new Map([...synchronisers].map(([id, { sync }]) => [id, sync.status])),
    stop: async () => {
      for (const { client } of synchronisers.values()) client.close();
    },
  };
}
