/**
 * The open watches of one server, for the faults that act on them
 * (stall, drop) and for close(). A resource filter is a plural
 * (`ingresses`) or a group-qualified one (`events.events.k8s.io`).
 */
import type { ResourceType } from './resource-types.ts';
import { qualifiedResource } from './status.ts';
import type { WatchSession } from './watch-session.ts';

export function typeMatches(type: ResourceType, resource: string | undefined): boolean {
  return resource === undefined || resource === type.plural || resource === qualifiedResource(type);
}

export type DropMode = 'end' | 'reset';

export class WatchHub {
  readonly #sessions = new Set<WatchSession>();
  /** Resource filters stalled; undefined stands for every resource. */
  readonly #stalled = new Set<string | undefined>();
  /** Resource filters whose watches get no bookmarks. */
  readonly #withoutBookmarks = new Set<string | undefined>();

  get size(): number {
    return this.#sessions.size;
  }

  /** Open watches of the type (all when undefined). */
  count(resource?: string): number {
    return [...this.#sessions].filter((session) => typeMatches(session.request.type, resource)).length;
  }

  add(session: WatchSession): void {
    this.#sessions.add(session);
  }

  remove(session: WatchSession): void {
    this.#sessions.delete(session);
  }

  isStalled(type: ResourceType): boolean {
    return [...this.#stalled].some((resource) => typeMatches(type, resource));
  }

  bookmarksWithheld(type: ResourceType): boolean {
    return [...this.#withoutBookmarks].some((resource) => typeMatches(type, resource));
  }

  withholdBookmarks(on: boolean, resource?: string): void {
    if (on) this.#withoutBookmarks.add(resource);
    else this.#withoutBookmarks.delete(resource);
  }

  stall(on: boolean, resource?: string): void {
    if (on) this.#stalled.add(resource);
    else this.#stalled.delete(resource);
    for (const session of this.#sessions) {
      if (typeMatches(session.request.type, resource)) session.stall(this.isStalled(session.request.type));
    }
  }

  /** Ends or resets the matching open watches; returns how many. */
  drop(resource: string | undefined, mode: DropMode): number {
    const dropped = [...this.#sessions].filter((session) => typeMatches(session.request.type, resource));
    for (const session of dropped) {
      if (mode === 'end') session.end();
      else session.reset();
    }
    return dropped.length;
  }

  unstallAll(): void {
    this.#stalled.clear();
    this.#withoutBookmarks.clear();
    for (const session of this.#sessions) session.stall(false);
  }

  closeAll(): void {
    for (const session of [...this.#sessions]) session.reset();
  }
}
