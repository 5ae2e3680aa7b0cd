import { isDeepStrictEqual } from 'node:util';
import type { BackendSettings } from '../routing/settings.ts';
import type { ObjectSettings } from '../routing/translated.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { withSource } from '../pipeline/value-source.ts';
import { ModelSource } from './model-source.ts';
import { aheadBy, compareStanding } from '../routing/precedence.ts';
import { NO_PROBLEMS, type BackendAsk } from './problems.ts';

/**
 * The settings a backend is served with when several Ingresses route to it
 * (one backend per Service port): the oldest Ingress that asks for backend
 * settings sets them all, and every other Ingress asking for different ones
 * is told which of its settings are not applied. An Ingress asking for none
 * has no say: it neither wins nor conflicts, so annotating a newer Ingress
 * changes a backend only while no older one annotates it.
 */

export const NO_BACKEND_SETTINGS: BackendSettings = Object.freeze({});

/**
 * An object's settings with its backend settings made a view-model item of
 * the field they were read from (an Ingress's annotations): the backend
 * lines a template writes inside `{{#settings}}` name that object, so a
 * line HAProxy refuses leads back to what asked for it, not to the Service.
 */
export function withBackendSource(settings: ObjectSettings, kind: string, object: KubeObject): ObjectSettings {
  if (Object.keys(settings.backend).length === 0 || settings.field === undefined) return settings;
  return { ...settings, backend: Object.freeze(withSource({ ...settings.backend }, new ModelSource(kind, object, settings.field))) };
}

/** One Ingress using a backend, with what it asks of it. */
export interface BackendUser extends BackendAsk {
  readonly label: string;
}

export interface SettledBackendSettings {
  readonly settings: BackendSettings;
  readonly warnings: readonly Problem[];
}

const SETTLED_NONE: SettledBackendSettings = Object.freeze({ settings: NO_BACKEND_SETTINGS, warnings: NO_PROBLEMS });

/**
 * The settings of the backends whose users ask for some, kept from one
 * build to the next: a build settles again only the backends whose users
 * moved (a re-read Ingress moves its backends).
 */
export class BackendSettingsTable {
  readonly #settled = new Map<string, SettledBackendSettings>();
  /** Backends with conflict warnings. */
  readonly #conflicted = new Set<string>();

  /** Settles a backend among its users now; true when its conflict warnings changed. */
  settle(name: string, users: Iterable<BackendUser>): boolean {
    const last = this.#settled.get(name);
    const settled = settleBackendSettings(name, users, last);
    if (settled.settings === NO_BACKEND_SETTINGS) this.#settled.delete(name);
    else this.#settled.set(name, settled);
    const conflicted = settled.warnings.length > 0;
    if (conflicted) this.#conflicted.add(name);
    else this.#conflicted.delete(name);
    return settled !== last && (conflicted || (last?.warnings.length ?? 0) > 0);
  }

  /** The settings a backend is served with: `{}` when none of its users asks for any. */
  get(name: string): BackendSettings {
    return this.#settled.get(name)?.settings ?? NO_BACKEND_SETTINGS;
  }

  /** The conflict warnings, per backend that has some. */
  *warnings(): Generator<readonly Problem[]> {
    for (const name of this.#conflicted) yield this.#settled.get(name)!.warnings;
  }
}

/** The field a conflict is reported on: the settings come from the Ingress's annotations. */
export const SETTINGS_FIELD = 'metadata.annotations';

/**
 * Settles a backend's settings among its users. `last`: what the backend
 * had, returned as it was when nothing moved. The settings are the
 * winner's own object (it names the Ingress, as read last), so a re-read
 * winner makes its backend again even when it asks the same.
 */
export function settleBackendSettings(backend: string, users: Iterable<BackendUser>, last: SettledBackendSettings | undefined): SettledBackendSettings {
  let winner: BackendUser | undefined;
  const asking: BackendUser[] = [];
  for (const user of users) {
    if (Object.keys(user.settings).length === 0) continue;
    asking.push(user);
    if (winner === undefined || compareStanding(user.place, winner.place) < 0) winner = user;
  }
  if (winner === undefined) return SETTLED_NONE;
  const settings = winner.settings;
  const told = new Set<string>([winner.label]);
  const warnings: Problem[] = [];
  for (const user of asking) {
    if (told.has(user.label)) continue;
    told.add(user.label);
    const differing = differingSettings(winner.settings, user.settings);
    if (differing.length === 0) continue;
    warnings.push({
      object: user.label,
      field: SETTINGS_FIELD,
      message: `backend ${backend} is served with the settings of ${aheadBy(winner.place, user.place, winner.label)}, which differ from these in ${differing.join(', ')}`,
    });
  }
  if (last !== undefined && last.settings === settings && isDeepStrictEqual(last.warnings, warnings)) return last;
  return { settings, warnings: warnings.length > 0 ? warnings : NO_PROBLEMS };
}

/**
 * The settings (dotted paths, e.g. `timeouts.server`) on which `other`
 * differs from `winner`: a value another one has, or lacks. Settings whose
 * parts only make sense together (protocol, balance, affinity) are named
 * whole.
 */
export function differingSettings(winner: BackendSettings, other: BackendSettings): string[] {
  const names: string[] = [];
  const keys = [...new Set([...Object.keys(winner), ...Object.keys(other)])].sort() as (keyof BackendSettings)[];
  for (const key of keys) {
    const a = winner[key];
    const b = other[key];
    if (isDeepStrictEqual(a, b)) continue;
    if ((key === 'timeouts' || key === 'healthCheck') && (a === undefined || typeof a === 'object') && (b === undefined || typeof b === 'object')) {
      const parts = (a ?? {}) as Record<string, unknown>;
      const otherParts = (b ?? {}) as Record<string, unknown>;
      for (const part of [...new Set([...Object.keys(parts), ...Object.keys(otherParts)])].sort()) {
        if (!isDeepStrictEqual(parts[part], otherParts[part])) names.push(`${key}.${part}`);
      }
    } else {
      names.push(key);
    }
  }
  return names;
}
