import { readAuthUsers } from '../annotations/auth-users.ts';
import { compareCodeUnits } from '../compare.ts';
import type { KubeObject, Problem } from '../pipeline/model.ts';
import { sourceOf, withSource } from '../pipeline/value-source.ts';
import { ModelSource } from './model-source.ts';
import { describeObject } from '../object-fields/names.ts';
import { NO_PROBLEMS } from './problems.ts';
import { sameItems } from '../collections/sorted-list.ts';
import type { RoutePolicy } from './route-policies.ts';
import type { Userlist } from './types.ts';

/**
 * The userlists of basic auth: one per Secret a served route policy names,
 * with the users HAProxy can check (see lib/annotations/auth-users.ts). A
 * user whose hash HAProxy cannot check is left out and named in a warning,
 * never silently locked out; a missing Secret gives an empty userlist, so
 * its routes answer 401 to everyone rather than serve without auth.
 */

export interface Userlists {
  readonly userlists: readonly Userlist[];
  readonly warnings: readonly Problem[];
}

/** Per Secret object, its userlist and the warnings about its users, made once. */
export type UserlistCache = WeakMap<KubeObject, { readonly userlist: Userlist; readonly warnings: readonly Problem[] }>;

const NONE: Userlists = Object.freeze({ userlists: Object.freeze([]), warnings: NO_PROBLEMS });

export function resolveUserlists(
  policies: readonly RoutePolicy[],
  secret: (namespace: string, name: string) => KubeObject | undefined,
  cache: UserlistCache,
  last: Userlists = NONE,
): Userlists {
  const wanted = new Map<string, RoutePolicy>();
  for (const policy of policies) if (policy.userlist !== undefined && !wanted.has(policy.userlist)) wanted.set(policy.userlist, policy);
  if (wanted.size === 0) return NONE;
  const userlists: Userlist[] = [];
  const warnings: Problem[] = [];
  for (const [name, policy] of [...wanted].sort(([a], [b]) => compareCodeUnits(a, b))) {
    const ref = policy.settings.basicAuth!.secret;
    const found = secret(ref.namespace, ref.name);
    if (!found) {
      const asking = sourceOf(policy);
      warnings.push({
        object: asking?.label ?? describeObject('Secret', ref.namespace, ref.name),
        field: asking?.field ?? '',
        message: `${describeObject('Secret', ref.namespace, ref.name)} not found: its basic auth answers 401 to every request`,
      });
      userlists.push(Object.freeze({ name, users: Object.freeze([]) }));
      continue;
    }
    let entry = cache.get(found);
    if (!entry) {
      entry = userlistOf(name, found);
      cache.set(found, entry);
    }
    userlists.push(entry.userlist);
    warnings.push(...entry.warnings);
  }
  return {
    userlists: sameItems(last.userlists, userlists) ? last.userlists : Object.freeze(userlists),
    warnings: warnings.length === 0 ? NO_PROBLEMS : sameItems(last.warnings, warnings) ? last.warnings : warnings,
  };
}

function userlistOf(name: string, secret: KubeObject): { readonly userlist: Userlist; readonly warnings: readonly Problem[] } {
  const data = secret['data'] as Readonly<Record<string, string>> | undefined;
  const read = readAuthUsers(data);
  const label = describeObject('Secret', secret.metadata.namespace, secret.metadata.name);
  const field = read.format === 'htpasswd' ? 'data[auth]' : 'data';
  const warnings: Problem[] = read.malformed.map((what) => ({ object: label, field, message: `${what}; not a user` }));
  const users: { readonly name: string; readonly password: string }[] = [];
  for (const user of read.users) {
    if (user.status === 'usable') users.push(Object.freeze({ name: user.name, password: user.hash }));
    else warnings.push({ object: label, field, message: `user ${JSON.stringify(user.name)} cannot log in: ${user.reason}` });
  }
  const userlist = Object.freeze(withSource({ name, users: Object.freeze(users) }, new ModelSource('Secret', secret, field)));
  return { userlist, warnings: warnings.length === 0 ? NO_PROBLEMS : warnings };
}
