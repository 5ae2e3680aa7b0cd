import type { KubeObject } from '../../../lib/pipeline/model.ts';
import type { MapModelSources } from '../../../lib/map-model/types.ts';
import { ingressTranslator } from '../../../lib/ingress/translate-ingress.ts';
import { base64 } from '../../support/tls-fixture.ts';

/** Builders for the Kubernetes objects the Ingress view model reads, shaped as the API serves them. */

export interface PathFields {
  readonly path?: unknown;
  readonly pathType?: unknown;
  readonly service?: unknown;
  /** A string is a port name, a number a port number; `portSpec` overrides both. */
  readonly port?: unknown;
  readonly portSpec?: unknown;
}

export function path(value: unknown, serviceName: unknown, port: unknown, pathType: unknown = 'Prefix'): PathFields {
  return { path: value, pathType, service: serviceName, port };
}

export function backend(serviceName: unknown, port: unknown, portSpec?: unknown): Record<string, unknown> {
  return {
    service: { name: serviceName, port: portSpec ?? (typeof port === 'string' ? { name: port } : { number: port }) },
  };
}

export function rule(host: unknown, ...paths: PathFields[]): Record<string, unknown> {
  return {
    ...(host === undefined ? {} : { host }),
    http: {
      paths: paths.map((p) => ({
        ...(p.path === undefined ? {} : { path: p.path }),
        ...(p.pathType === undefined ? {} : { pathType: p.pathType }),
        backend: backend(p.service, p.port, p.portSpec),
      })),
    },
  };
}

export interface IngressFields {
  readonly namespace?: unknown;
  readonly created?: string;
  /** spec.ingressClassName; null leaves it out. */
  readonly className?: string | null;
  readonly annotationClass?: string;
  /** metadata.annotations besides the class annotation. */
  readonly annotations?: Readonly<Record<string, string>>;
  readonly rules?: readonly unknown[];
  readonly tls?: readonly unknown[];
  readonly defaultBackend?: unknown;
}

export function ingress(name: string, fields: IngressFields = {}): KubeObject {
  const className = fields.className === undefined ? 'haproxy' : fields.className;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: (fields.namespace ?? 'default') as string,
      uid: `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: fields.created ?? '2024-01-01T00:00:00Z',
      ...(fields.annotationClass === undefined && fields.annotations === undefined
        ? {}
        : { annotations: { ...fields.annotations, ...(fields.annotationClass === undefined ? {} : { 'kubernetes.io/ingress.class': fields.annotationClass }) } }),
    },
    spec: {
      ...(className === null ? {} : { ingressClassName: className }),
      ...(fields.defaultBackend === undefined ? {} : { defaultBackend: fields.defaultBackend }),
      ...(fields.rules === undefined ? {} : { rules: fields.rules }),
      ...(fields.tls === undefined ? {} : { tls: fields.tls }),
    },
  };
}

export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  readonly targetPort?: number | string;
}

export function service(name: string, ports: readonly ServicePort[], namespace = 'default', type = 'ClusterIP'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      type,
      selector: { app: name },
      ports: ports.map((port) => ({ protocol: 'TCP', targetPort: port.port, ...port })),
    },
  };
}

export interface SliceEndpoint {
  readonly addresses: readonly unknown[];
  readonly ready?: boolean;
}

export function endpointSlice(
  name: string,
  serviceName: string,
  ports: readonly { readonly name?: string; readonly port: unknown }[],
  endpoints: readonly SliceEndpoint[],
  options: { readonly namespace?: string; readonly addressType?: string } = {},
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      labels: { 'kubernetes.io/service-name': serviceName },
    },
    addressType: options.addressType ?? 'IPv4',
    ports: ports.map((port) => ({ protocol: 'TCP', ...port })),
    endpoints: endpoints.map((endpoint) => ({
      addresses: endpoint.addresses,
      conditions: endpoint.ready === undefined ? {} : { ready: endpoint.ready, serving: endpoint.ready, terminating: false },
    })),
  };
}

export function tlsSecret(name: string, certificate: string, key: string, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace },
    data: { 'tls.crt': base64(certificate), 'tls.key': base64(key) },
  };
}

export interface World {
  readonly className?: string;
  readonly ingresses?: readonly KubeObject[];
  readonly services?: readonly KubeObject[];
  readonly slices?: readonly KubeObject[];
  readonly secrets?: readonly KubeObject[];
  readonly sharedHostNamespaces?: readonly string[];
  readonly now?: number;
}

/** Sources over plain lists, looked up the way the controller's indexed stores answer. */
export function sources(world: World): MapModelSources {
  const find = (objects: readonly KubeObject[] | undefined, namespace: string, name: string) =>
    objects?.find((object) => object.metadata.namespace === namespace && object.metadata.name === name);
  return {
    className: world.className ?? 'haproxy',
    translate: ingressTranslator(world.className ?? 'haproxy'),
    ingresses: world.ingresses ?? [],
    service: (namespace, name) => find(world.services, namespace, name),
    endpointSlices: (namespace, name) => (world.slices ?? []).filter((slice) => slice.metadata.namespace === namespace && slice.metadata.labels?.['kubernetes.io/service-name'] === name),
    secret: (namespace, name) => find(world.secrets, namespace, name),
    ...(world.sharedHostNamespaces ? { sharedHostNamespaces: world.sharedHostNamespaces } : {}),
    ...(world.now !== undefined ? { now: world.now } : {}),
  };
}
