import { backendFiltersConflict } from './backend-filters.ts';
import type { RouteRecord } from './route.ts';

/**
 * What the controller cannot route yet, decided here once for every API:
 * a translator leaves such a record out with a warning naming its match
 * (translated.ts LeftOutMatch, which its object's status reads), never
 * serving it as something else.
 */

/** Why a record cannot be served yet, or undefined when it can. */
export function unserved(record: RouteRecord): string | undefined {
  // A map line's key is one word read raw: what an Ingress's regex path may not hold (lib/object-fields/names.ts checkRegexPath), this may not either.
  if (record.path.kind === 'regex' && /[#%`]/.test(record.path.value)) return "a RegularExpression path with '#', '%' or '`'";
  for (const backend of record.backends) {
    if (backend.settings === undefined || backend.refused !== undefined) continue;
    const conflict = backendFiltersConflict(record.settings, backend.settings);
    if (conflict !== undefined) return conflict;
  }
  return undefined;
}
