import type { BackendRef, RouteClaim } from './ingress-reader.ts';

/**
 * The backends requests are mirrored to (Gateway API RequestMirror: the
 * route policy's mirror, see route-policies.ts), counted per winning claim:
 * a mirror's Service port has a backend while some served route copies
 * requests to it, whether or not a route sends requests there itself, so
 * its servers follow the EndpointSlices as every backend's do.
 */
export class MirrorBackends {
  readonly #uses = new Map<string, { readonly backend: BackendRef; claims: number }>();

  /** A claim that wins its key; `moved` gets a backend that gained its first user. */
  add(claim: RouteClaim, moved: Set<string>): void {
    const mirror = claim.policy?.mirror;
    if (mirror === undefined) return;
    const used = this.#uses.get(mirror.backend);
    if (used) {
      used.claims++;
      return;
    }
    const backend: BackendRef = Object.freeze({ name: mirror.backend, namespace: mirror.namespace, service: mirror.service, port: Object.freeze({ number: mirror.port }) });
    this.#uses.set(mirror.backend, { backend, claims: 1 });
    moved.add(mirror.backend);
  }

  /** A claim that no longer wins; `moved` gets a backend that lost its last user. */
  remove(claim: RouteClaim, moved: Set<string>): void {
    const mirror = claim.policy?.mirror;
    if (mirror === undefined) return;
    const used = this.#uses.get(mirror.backend)!;
    if (--used.claims > 0) return;
    this.#uses.delete(mirror.backend);
    moved.add(mirror.backend);
  }

  backend(name: string): BackendRef | undefined {
    return this.#uses.get(name)?.backend;
  }

  names(): IterableIterator<string> {
    return this.#uses.keys();
  }
}
