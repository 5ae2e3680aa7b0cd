/**
 * Fleets of HAProxy instances behind Data Plane APIs: a fixed list of URLs
 * (local mode with --dataplane-url) or the pods discovery finds (in a
 * cluster). Each endpoint has its own client and convergence (converge.ts
 * over dataplane-target.ts); the fleet shares one planner, so endpoints in
 * step plan once. The configuration is deployed as rendered: the instances
 * have the layout it describes (dataplane.baseDir...).
 */
import { urlPeer } from './fleet-peers.ts';
import type { ControllerConfig } from '../config/types.ts';
import { DataplaneClient } from '../dataplane/client.ts';
import type { DataplaneTlsOptions } from '../dataplane/tls.ts';
import type { Endpoint } from '../pipeline/model.ts';
import { Converger, type EndpointStatus } from './converge.ts';
import type { DataplaneState } from './dataplane-state.ts';
import { DataplaneTarget } from './dataplane-target.ts';
import type { Fleet } from './fleet.ts';
import { sharedPlanner, type Planner } from './shared-planner.ts';

export interface DataplaneAccess {
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** Per HTTP request. */
  readonly timeoutMs?: number;
  readonly tls?: DataplaneTlsOptions | undefined;
  /** Where the deployments' notices go (a server left in maintenance, a forced reload). */
  readonly log?: (message: string) => void;
}

export interface DataplaneFleetOptions extends DataplaneAccess {
  /** Data Plane API base URLs, e.g. http://10.0.0.5:5555. */
  readonly urls: readonly string[];
}

/** One endpoint: its client (the connections) and its convergence. */
interface Instance {
  readonly url: string;
  readonly client: DataplaneClient;
  readonly converger: Converger<DataplaneState>;
}

function instance(url: string, access: DataplaneAccess, plan: Planner): Instance {
  const client = new DataplaneClient({
    url,
    ...(access.username !== undefined ? { username: access.username } : {}),
    ...(access.password !== undefined ? { password: access.password } : {}),
    ...(access.timeoutMs !== undefined ? { timeoutMs: access.timeoutMs } : {}),
    ...(access.tls ? { tls: access.tls } : {}),
  });
  const log = access.log === undefined ? {} : { log: access.log };
  return { url, client, converger: new Converger({ target: new DataplaneTarget({ client, ...log }), plan, ...log }) };
}

function statusesOf(instances: ReadonlyMap<string, Instance>): ReadonlyMap<string, EndpointStatus> {
  return new Map([...instances].map(([id, { converger }]) => [id, converger.status]));
}

/** HAProxy hosts at fixed Data Plane API URLs. */
export function dataplaneFleet(options: DataplaneFleetOptions): Fleet & { readonly statuses: () => ReadonlyMap<string, EndpointStatus> } {
  const plan = sharedPlanner();
  const instances = new Map<string, Instance>();
  const endpoints: Endpoint[] = [];
  for (const url of options.urls) {
    const created = instance(url, options, plan);
    // The client's endpoint never carries credentials: safe as an id in logs and metrics.
    const endpoint: Endpoint = { id: created.client.endpoint, url: created.client.endpoint, peer: urlPeer(created.client.endpoint) };
    endpoints.push(endpoint);
    instances.set(endpoint.id, created);
  }
  return {
    endpoints,
    plan,
    prepare: (config: ControllerConfig) => config,
    deploy: (endpoint, files, hash, reason, confirmed) => {
      const target = instances.get(endpoint.id);
      if (!target) return Promise.reject(new Error(`unknown Data Plane API endpoint ${endpoint.id}`));
      return target.converger.deploy(files, hash, reason, confirmed);
    },
    describe: () => `deploying to ${endpoints.length} Data Plane API endpoint(s): ${endpoints.map((e) => e.id).join(', ')}`,
    statuses: () => statusesOf(instances),
    stop: async () => {
      for (const { client } of instances.values()) client.close();
    },
  };
}

export interface DiscoveredFleet extends Fleet {
  /** Drops the clients (and connections) of endpoints no longer discovered. */
  retain(endpoints: readonly Endpoint[]): void;
  statuses(): ReadonlyMap<string, EndpointStatus>;
}

/**
 * Data Plane API endpoints found at run time (HAProxy pods): a client and
 * convergence are made the first time an endpoint is deployed to, and a pod
 * that comes back at another address gets fresh ones, since it is a new
 * HAProxy with nothing deployed.
 */
export function discoveredFleet(access: DataplaneAccess): DiscoveredFleet {
  const plan = sharedPlanner();
  const instances = new Map<string, Instance>();
  const instanceFor = (endpoint: Endpoint): Instance => {
    const known = instances.get(endpoint.id);
    if (known?.url === endpoint.url) return known;
    known?.client.close();
    const created = instance(endpoint.url, access, plan);
    instances.set(endpoint.id, created);
    return created;
  };
  return {
    endpoints: [],
    plan,
    prepare: (config: ControllerConfig) => config,
    deploy: (endpoint, files, hash, reason, confirmed) => instanceFor(endpoint).converger.deploy(files, hash, reason, confirmed),
    describe: () => `deploying to the Data Plane APIs of discovered HAProxy pods (${instances.size} known)`,
    retain: (endpoints) => {
      const current = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.url]));
      for (const [id, known] of instances) {
        if (current.get(id) === known.url) continue;
        known.client.close();
        instances.delete(id);
      }
    },
    statuses: () => statusesOf(instances),
    stop: async () => {
      for (const { client } of instances.values()) client.close();
      instances.clear();
    },
  };
}
