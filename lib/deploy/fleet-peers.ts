import type { Endpoint, Peer } from '../pipeline/model.ts';

/**
 * The `peers` section's members: every endpoint that has a peer, one per
 * name, sorted by name so the same fleet always renders the same lines
 * (whatever order discovery found it in) and a pod's restart at a new
 * address is the only change its line sees.
 */
export function fleetPeers(endpoints: readonly Endpoint[]): readonly Peer[] {
  const byName = new Map<string, Peer>();
  for (const { peer } of endpoints) if (peer !== undefined) byName.set(peer.name, peer);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whether two member lists (as fleetPeers gives them) render the same `peers` section. */
export function samePeers(a: readonly Peer[], b: readonly Peer[]): boolean {
  return a.length === b.length && a.every((peer, i) => peer.name === b[i]!.name && peer.address === b[i]!.address);
}

/**
 * The peer of a HAProxy at a fixed Data Plane API URL: the URL's host is
 * both its address and its local peer name, so that HAProxy must be started
 * with `-L <host>` (its hostname is the name otherwise). An IPv6 host loses
 * its brackets: HAProxy reads the port after the last colon.
 */
export function urlPeer(url: string): Peer {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  return { name: host, address: host };
}
