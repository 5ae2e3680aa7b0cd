import { checkHost, quote, type Checked } from '../object-fields/names.ts';

/**
 * Gateway API hostnames (listeners' `hostname`, HTTPRoutes' `hostnames`):
 * a DNS name, or `*.` and a DNS name. A wildcard is a suffix match: it
 * covers any number of labels (`*.example.com` covers `a.b.example.com`)
 * but not the name itself (apis/v1/httproute_types.go, Hostnames).
 */

const IPV4 = /^[0-9]+(?:\.[0-9]+){3}$/;

/** A hostname as the Gateway API allows it, lowercase; IP addresses are refused as the specification says. */
export function checkHostname(value: unknown): Checked<string> {
  const checked = checkHost(value);
  if (!checked.ok) return checked;
  if (IPV4.test(checked.value.host)) return { ok: false, reason: `${quote(value)} is an IP address, which a hostname may not be` };
  return { ok: true, value: checked.value.host };
}

function suffixOf(wildcard: string): string {
  return wildcard.slice(1);
}

/** Whether `name` (a name or a wildcard) is covered by `wildcard`. */
function covers(wildcard: string, name: string): boolean {
  return name.endsWith(suffixOf(wildcard)) && name.length > suffixOf(wildcard).length;
}

/** The hostname both a listener's and a route's hostname match, the more specific of the two; undefined when they share none. */
export function intersectHostname(listener: string, route: string): string | undefined {
  const listenerWild = listener.startsWith('*.');
  const routeWild = route.startsWith('*.');
  if (listener === route) return route;
  if (listenerWild && covers(listener, route)) return route;
  if (routeWild && covers(route, listener)) return listener;
  return undefined;
}

/**
 * The hostnames a route is served for on a listener: the route's own that
 * the listener's matches (narrowed to the listener's when the route's
 * wildcard is wider), the listener's when the route names none, '*' (any)
 * when neither names any. Empty when both name hostnames and none match:
 * the route is not accepted there (NoMatchingListenerHostname).
 */
export function hostnamesOn(listener: string | undefined, route: readonly string[]): readonly string[] {
  if (listener === undefined) return route.length === 0 ? ['*'] : route;
  if (route.length === 0) return [listener];
  const found = new Set<string>();
  for (const hostname of route) {
    const shared = intersectHostname(listener, hostname);
    if (shared !== undefined) found.add(shared);
  }
  return [...found];
}
