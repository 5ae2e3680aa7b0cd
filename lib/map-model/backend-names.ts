import type { KubeObject } from '../pipeline/model.ts';
import { isFields } from '../object-fields/fields.ts';
import type { BackendRef, RouteClaim } from './claim-types.ts';
import { RouteItem } from './model-source.ts';
import { sourceOf } from '../pipeline/value-source.ts';
import { isPortNumber } from '../object-fields/names.ts';
import { objectKey } from '../pipeline/object-key.ts';
import { backendName } from './service-backend-name.ts';

/**
 * One backend per Service port, however Ingresses name the port: an Ingress
 * asking for `{name: http}` and another asking for `{number: 80}` of the same
 * Service port share the backend `<namespace>_<service>_80`, so the second
 * adds map lines (a Runtime API change), never a backend (a reload), and the
 * endpoints are health-checked once.
 *
 * The name always carries the port number, because a number needs no
 * Service to be known and every Service port has one. A port named by an
 * Ingress is looked up in the Service; while the Service, or a port of that
 * name, is missing, the backend is `<namespace>_<service>_<port name>` (it
 * has no servers then, and says why). A port name always has a letter, so
 * the two kinds of names never collide.
 */

/**
 * The backend of routes that never reach one (their policy answers every
 * request, as an HTTPRoute's redirect does): an empty name, so the map value
 * is ":<policy key>", and no backend is made for it.
 */
export const NO_BACKEND: BackendRef = Object.freeze({ name: '', namespace: '', service: '', port: Object.freeze({ number: 0 }) });

export function serviceKey(namespace: string, service: string): string {
  return objectKey(namespace, service);
}

/** The backend `asked` resolves to with the Service as it is (undefined: missing): `asked` itself unless it names a port the Service has. */
export function resolvedBackend(asked: BackendRef, service: KubeObject | undefined): BackendRef {
  if (!('name' in asked.port) || service === undefined) return asked;
  const spec = service['spec'];
  const ports: readonly unknown[] = isFields(spec) && Array.isArray(spec['ports']) ? spec['ports'] : [];
  const wanted = asked.port.name;
  for (const port of ports) {
    if (!isFields(port) || port['name'] !== wanted) continue;
    const number = port['port'];
    if (!isPortNumber(number)) return asked;
    return { name: backendName(asked.namespace, asked.service, number), namespace: asked.namespace, service: asked.service, port: { number } };
  }
  return asked;
}

/** Points a claim at the backend it resolves to, with a map line of its own when that is not the one asked for. */
export function setBackend(claim: RouteClaim, backend: BackendRef): void {
  if (backend.name === claim.backend.name) return;
  claim.backend = backend;
  claim.line = Object.freeze(new RouteItem(claim.key, backend.name, claim.policy, sourceOf(claim.line)!));
}
