import type { IngressNotes } from '../annotations/migration-report.ts';
import { compareCodeUnits } from '../compare.ts';
import { ingressClassOf } from '../kube-syntax/ingress-class.ts';
import type { KubeObject } from '../pipeline/model.ts';
import { HostOwnership, type HostSharing } from '../map-model/host-ownership.ts';
import { isFields } from '../object-fields/fields.ts';

/**
 * What a migrating user must know of an Ingress beyond its annotations:
 * that it is not served for its class (every ingress-nginx Ingress on a
 * first run), or that it shares a host with Ingresses of another
 * namespace, where ingress-nginx merges their paths and this controller
 * gives the host to one namespace. Said by the `annotations` report and by
 * `render`, which would otherwise leave such Ingresses out without a word.
 */

export interface IngressPlacement {
  /** ingress.className */
  readonly className: string;
  /** ingress.sharedHostNamespaces */
  readonly sharedHostNamespaces: HostSharing;
}

export const ingressKey = (ingress: KubeObject): string => `${ingress.metadata.namespace ?? 'default'}/${ingress.metadata.name}`;

/** Why an Ingress is not served for its class, or undefined when it is of the class served. */
export function classNote(ingress: KubeObject, className: string): string | undefined {
  const asked = ingressClassOf(ingress);
  if (asked === className) return undefined;
  const how = `set spec.ingressClassName: ${className} on it (or ingress.className: ${JSON.stringify(asked ?? '')} in the controller configuration) to serve it`;
  return asked === undefined || asked === null
    ? `not served: it has no class (no spec.ingressClassName or kubernetes.io/ingress.class), and this controller serves only class ${JSON.stringify(className)} (ingress.className): set spec.ingressClassName: ${className} on it to serve it`
    : `not served: its class is ${JSON.stringify(asked)}, and this controller serves class ${JSON.stringify(className)} (ingress.className): ${how}`;
}

/** The hosts an Ingress names, by rules and TLS entries. */
function hostsOf(ingress: KubeObject): Set<string> {
  const hosts = new Set<string>();
  const spec = ingress['spec'];
  if (!isFields(spec)) return hosts;
  for (const rule of Array.isArray(spec['rules']) ? spec['rules'] : []) if (isFields(rule) && typeof rule['host'] === 'string' && rule['host'] !== '') hosts.add(rule['host']);
  for (const entry of Array.isArray(spec['tls']) ? spec['tls'] : []) {
    if (!isFields(entry) || !Array.isArray(entry['hosts'])) continue;
    for (const host of entry['hosts']) if (typeof host === 'string' && host !== '') hosts.add(host);
  }
  return hosts;
}

/**
 * Per Ingress (namespace/name), the notes a migrating user must read: its
 * class, or, among the Ingresses served, each host it shares with
 * Ingresses of namespaces that may not share hosts with its own.
 */
export function migrationNotes(ingresses: readonly KubeObject[], placement: IngressPlacement): Map<string, IngressNotes> {
  const notes = new Map<string, IngressNotes>();
  const served: KubeObject[] = [];
  for (const ingress of ingresses) {
    const why = classNote(ingress, placement.className);
    if (why === undefined) served.push(ingress);
    else notes.set(ingressKey(ingress), { class: why, hosts: [] });
  }
  const ownership = new HostOwnership(placement.sharedHostNamespaces);
  const groups = new Map<string, Map<string, Set<string>>>();
  for (const ingress of served) {
    const namespace = ingress.metadata.namespace ?? 'default';
    for (const host of hostsOf(ingress)) {
      const byGroup = groups.get(host) ?? new Map<string, Set<string>>();
      const group = ownership.groupOf(namespace);
      byGroup.set(group, (byGroup.get(group) ?? new Set()).add(namespace));
      groups.set(host, byGroup);
    }
  }
  for (const ingress of served) {
    const namespace = ingress.metadata.namespace ?? 'default';
    const own = ownership.groupOf(namespace);
    const shared: string[] = [];
    for (const host of [...hostsOf(ingress)].sort(compareCodeUnits)) {
      const others = [...(groups.get(host) ?? new Map<string, Set<string>>())].filter(([group]) => group !== own).flatMap(([, namespaces]) => [...namespaces]);
      if (others.length === 0) continue;
      shared.push(
        `host ${host} is also claimed by Ingresses of namespace ${others.sort(compareCodeUnits).join(', ')}: a host belongs to the namespace of its oldest Ingress, and the others' rules and TLS entries for it are not served (ingress-nginx merges their paths); list the namespaces in ingress.sharedHostNamespaces to serve them all`,
      );
    }
    if (shared.length > 0) notes.set(ingressKey(ingress), { hosts: shared });
  }
  return notes;
}
