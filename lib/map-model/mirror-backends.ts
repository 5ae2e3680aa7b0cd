import { backendUses } from './backend-choice.ts';
import type { BackendRef, RouteClaim } from './claim-types.ts';
import type { RoutePolicy } from './route-policies.ts';

type ServicePort = Pick<RoutePolicy['mirrors'][number], 'backend' | 'namespace' | 'service' | 'port'>;

/** The mirrors and usable auth Services of a claim's policies: its own, or each share's of its choice (backend-choice.ts). */
function mirrorsOf(claim: RouteClaim): ServicePort[] {
  return backendUses(claim).flatMap(({ policy }): ServicePort[] => {
    const auth = policy?.gatewayExternalAuth;
    return [...(policy?.mirrors ?? []), ...(auth && !auth.refused ? [auth] : [])];
  });
}

/**
 * The backends requests are mirrored to (Gateway API RequestMirror: the
 * route policy's mirror, see route-policies.ts, or the policy of each share
 * of a backendRef choice, backend-choice.ts) and the auth Services asked
 * first (Gateway API ExternalAuth), counted per policy of a winning claim:
 * such a Service port has a backend while some served route copies requests
 * to it or asks it, whether or not a route sends requests there itself, so
 * its servers follow the EndpointSlices as every backend's do.
 */
export class MirrorBackends {
  readonly #uses = new Map<string, { readonly backend: BackendRef; claims: number }>();

  /** A claim that wins its key; `moved` gets a backend that gained its first user. */
  add(claim: RouteClaim, moved: Set<string>): void {
    for (const mirror of mirrorsOf(claim)) {
      const used = this.#uses.get(mirror.backend);
      if (used) {
        used.claims++;
        continue;
      }
      const backend: BackendRef = Object.freeze({ name: mirror.backend, namespace: mirror.namespace, service: mirror.service, port: Object.freeze({ number: mirror.port }) });
      this.#uses.set(mirror.backend, { backend, claims: 1 });
      moved.add(mirror.backend);
    }
  }

  /** A claim that no longer wins; `moved` gets a backend that lost its last user. */
  remove(claim: RouteClaim, moved: Set<string>): void {
    for (const mirror of mirrorsOf(claim)) {
      const used = this.#uses.get(mirror.backend)!;
      if (--used.claims > 0) continue;
      this.#uses.delete(mirror.backend);
      moved.add(mirror.backend);
    }
  }

  backend(name: string): BackendRef | undefined {
    return this.#uses.get(name)?.backend;
  }

  names(): IterableIterator<string> {
    return this.#uses.keys();
  }
}
