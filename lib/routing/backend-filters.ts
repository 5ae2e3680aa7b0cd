import type { RouteSettings } from './settings.ts';

/**
 * A backendRef's own filters (Gateway API HTTPBackendRef.filters) act on
 * the requests sent to that backendRef alone, after its rule's filters. Both
 * become one set of settings per backendRef, as if the rule's filters ran
 * first and the backendRef's then: one route policy per request, as every
 * other route has.
 */

type HeaderChanges = NonNullable<RouteSettings['requestHeaders']>;

/**
 * Header changes of the rule, then of the backendRef. A policy writes its
 * removals, then its sets, then its additions; a header the backendRef sets
 * or removes ends as the backendRef says whatever the rule did to it, so
 * the rule's changes to that header are dropped, and the rule's other
 * changes come before the backendRef's.
 */
function composedHeaders(rule: HeaderChanges | undefined, own: HeaderChanges | undefined): HeaderChanges | undefined {
  if (rule === undefined || own === undefined) return own ?? rule;
  const replaced = new Set([...(own.set ?? []).map((action) => action.name.toLowerCase()), ...(own.remove ?? []).map((name) => name.toLowerCase())]);
  const kept = (name: string) => !replaced.has(name.toLowerCase());
  return {
    set: [...(rule.set ?? []).filter((action) => kept(action.name)), ...(own.set ?? [])],
    add: [...(rule.add ?? []).filter((action) => kept(action.name)), ...(own.add ?? [])],
    remove: [...(rule.remove ?? []).filter(kept), ...(own.remove ?? [])],
  };
}

/**
 * Why a rule's filters and a backendRef's cannot be served as one, or
 * undefined when they can. A policy rewrites the path once, from the
 * matched path: a backendRef replacing the matched prefix of a path its
 * rule already rewrote, or redirecting to a path made from it, would act
 * on a path the policy never sees.
 */
export function backendFiltersConflict(rule: RouteSettings, own: RouteSettings): string | undefined {
  // A rule's redirect answers every request itself: no request reaches a backendRef.
  if (rule.redirect !== undefined) return undefined;
  if (rule.rewrite !== undefined && own.rewrite?.kind === 'prefix') return "a backendRef's URLRewrite ReplacePrefixMatch under its rule's URLRewrite path";
  if (rule.rewrite !== undefined && own.redirect !== undefined) return "a backendRef's RequestRedirect under its rule's URLRewrite path";
  return undefined;
}

/**
 * The settings of requests sent to one backendRef: its rule's, with the
 * backendRef's own filters applied after them (a later Host or whole path
 * replaces the rule's). `own` must not conflict (backendFiltersConflict).
 */
export function withBackendFilters(rule: RouteSettings, own: RouteSettings | undefined): RouteSettings {
  if (own === undefined || rule.redirect !== undefined) return rule;
  const requestHeaders = composedHeaders(rule.requestHeaders, own.requestHeaders);
  const responseHeaders = composedHeaders(rule.responseHeaders, own.responseHeaders);
  return {
    ...rule,
    ...own,
    ...(requestHeaders ? { requestHeaders } : {}),
    ...(responseHeaders ? { responseHeaders } : {}),
    // The rule's copies and the backendRef's own: a request sent to this backendRef makes each.
    ...(rule.mirrors && own.mirrors ? { mirrors: [...rule.mirrors, ...own.mirrors] } : {}),
  };
}
