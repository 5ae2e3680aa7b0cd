import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { base64, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';
import { mulberry32 } from '../../support/fuzz-values.ts';

/**
 * A cluster like the benchmark's (Ingress i routes app-i.example.com to
 * Service svc-i in namespace ns-(i mod namespaces)) and a seeded sequence of
 * changes to it that a reused view model must follow: Ingresses added,
 * changed and deleted, claims on hosts and paths other Ingresses hold
 * (older and newer ones, Exact against Prefix), Ingresses moving to another
 * class and back, deleted winners, default backends, TLS entries, invalid
 * fields, and Service, EndpointSlice and Secret changes in between.
 */

export interface WorldShape {
  readonly size: number;
  readonly namespaces: number;
}

export interface WorldChange {
  /** The store's name in the shipped configuration. */
  readonly resource: 'ingresses' | 'services' | 'endpointslices' | 'secrets';
  readonly object: KubeObject;
  readonly deleted: boolean;
}

const START = Date.UTC(2024, 0, 1);

function namespaceOf(i: number, shape: WorldShape): string {
  return `ns-${i % shape.namespaces}`;
}

interface PathSpec {
  readonly path: string;
  readonly pathType: string;
  readonly service: string;
  readonly port: { readonly name: string } | { readonly number: number };
}

interface IngressSpec {
  readonly name: string;
  readonly namespace: string;
  /** Milliseconds, or undefined for no creationTimestamp. */
  readonly created: number | undefined;
  readonly className: string | undefined;
  readonly annotationClass?: string;
  readonly host: string | undefined;
  readonly paths: readonly PathSpec[];
  readonly defaultBackend?: string;
  readonly tls?: { readonly secretName: string; readonly hosts: readonly string[] };
}

/**
 * Route settings by the object's version, so policies come, go and are
 * shared as Ingresses change, without drawing from the seeded sequence.
 */
const routeSettings: readonly Readonly<Record<string, string>>[] = [
  {},
  { 'haproxy.org/ssl-redirect': 'true', 'haproxy.org/ssl-redirect-code': '301' },
  {},
  { 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' },
  { 'haproxy.org/allow-list': '10.0.0.0/8' },
  { 'nginx.ingress.kubernetes.io/rewrite-target': '/' },
];

function ingressObject(spec: IngressSpec, version: number): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      uid: `uid-${spec.namespace}-${spec.name}`,
      resourceVersion: String(version),
      ...(spec.created === undefined ? {} : { creationTimestamp: new Date(spec.created).toISOString() }),
      annotations: { ...routeSettings[version % routeSettings.length], ...(spec.annotationClass === undefined ? {} : { 'kubernetes.io/ingress.class': spec.annotationClass }) },
    },
    spec: {
      ...(spec.className === undefined ? {} : { ingressClassName: spec.className }),
      ...(spec.defaultBackend === undefined ? {} : { defaultBackend: { service: { name: spec.defaultBackend, port: { name: 'http' } } } }),
      ...(spec.tls === undefined ? {} : { tls: [spec.tls] }),
      rules: [
        {
          ...(spec.host === undefined ? {} : { host: spec.host }),
          http: {
            paths: spec.paths.map((path) => ({
              ...(path.path === '' ? {} : { path: path.path }),
              pathType: path.pathType,
              backend: { service: { name: path.service, port: path.port } },
            })),
          },
        },
      ],
    },
  };
}

function serviceObject(i: number, shape: WorldShape, version: number, portName = 'http', portNumber = 80): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: namespaceOf(i, shape), uid: `uid-service-${i}`, resourceVersion: String(version) },
    spec: { type: 'ClusterIP', ports: [{ name: portName, port: portNumber, targetPort: 8080, protocol: 'TCP' }] },
  };
}

function sliceObject(i: number, shape: WorldShape, version: number, endpoints: readonly { readonly last: number; readonly ready: boolean }[]): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `svc-${i}-abcde`,
      namespace: namespaceOf(i, shape),
      uid: `uid-slice-${i}`,
      resourceVersion: String(version),
      labels: { 'kubernetes.io/service-name': `svc-${i}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: endpoints.map(({ last, ready }) => ({
      addresses: [`127.${(i >> 8) & 255}.${i & 255}.${last}`],
      conditions: { ready, serving: ready, terminating: false },
    })),
  };
}

function secretObject(name: string, namespace: string, version: number, valid: boolean): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace, resourceVersion: String(version) },
    data: { 'tls.crt': base64(valid ? SELF_SIGNED_CERT : 'not a certificate'), 'tls.key': base64(SELF_SIGNED_KEY) },
  };
}

/** The benchmark's world at this size: one Ingress, Service and 3-endpoint EndpointSlice per i. */
/** Ingress i as the world starts: its own host, routed to its own Service. */
function startingIngress(i: number, shape: WorldShape): IngressSpec {
  return {
    name: `app-${i}`,
    namespace: namespaceOf(i, shape),
    created: START + i * 1000,
    className: 'haproxy',
    host: `app-${i}.example.com`,
    paths: [{ path: '/', pathType: 'Prefix', service: `svc-${i}`, port: { name: 'http' } }],
  };
}

export function initialWorld(shape: WorldShape): Map<string, KubeObject[]> {
  const range = Array.from({ length: shape.size }, (_, i) => i);
  const ingresses = range.map((i) => ingressObject(startingIngress(i, shape), 1));
  const endpoints = [1, 2, 3].map((last) => ({ last, ready: true }));
  return new Map([
    ['ingresses', ingresses],
    ['services', range.map((i) => serviceObject(i, shape, 1))],
    ['endpointslices', range.map((i) => sliceObject(i, shape, 1, endpoints))],
    ['secrets', [secretObject('tls-a', namespaceOf(0, shape), 1, true), secretObject('tls-b', namespaceOf(0, shape), 1, false)]],
  ]);
}

/** A seeded sequence of `steps` changes to initialWorld(shape). */
export function* randomChanges(seed: number, steps: number, shape: WorldShape): Generator<WorldChange> {
  const random = mulberry32(seed);
  const below = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;
  let version = 1;
  /** Every Ingress stored now, by "namespace/name". */
  const ingresses = new Map<string, IngressSpec>();
  for (let i = 0; i < shape.size; i++) {
    ingresses.set(`${namespaceOf(i, shape)}/app-${i}`, startingIngress(i, shape));
  }
  let extra = 0;
  const conflicting: string[] = [];

  /** A Service of the namespace, so most backends resolve; now and then one that does not exist. */
  const serviceIn = (namespace: number) => (random() < 0.05 ? 'missing' : `svc-${namespace + shape.namespaces * below(Math.ceil(shape.size / shape.namespaces))}`);
  const port = (): PathSpec['port'] => (random() < 0.9 ? { name: 'http' } : random() < 0.5 ? { number: 80 } : { number: 81 });
  const host = () => {
    const r = random();
    return r < 0.08 ? undefined : r < 0.16 ? `*.wild${below(3)}.example.com` : `app-${below(shape.size)}.example.com`;
  };
  const created = () => {
    const r = random();
    // Missing, tied (then namespace/name decide) or anywhere from before the first to after the last.
    return r < 0.05 ? undefined : r < 0.15 ? START : START + (below(shape.size + 20) - 10) * 1000;
  };
  const randomIngress = (name: string, namespaceIndex: number): IngressSpec => {
    const r = random();
    const paths = Array.from({ length: 1 + below(3) }, () => ({
      path: pick(['/', '/', '/v2', '/api', '/api/', '/a/b', '']),
      pathType: pick(['Prefix', 'Prefix', 'Exact', 'ImplementationSpecific']),
      service: serviceIn(namespaceIndex),
      port: port(),
    }));
    const hostName = host();
    return {
      name,
      namespace: `ns-${namespaceIndex}`,
      created: created(),
      className: r < 0.08 ? 'other' : r < 0.14 ? undefined : 'haproxy',
      ...(r >= 0.08 && r < 0.12 ? { annotationClass: 'haproxy' } : {}),
      host: hostName,
      // An invalid path leaves the whole Ingress out with a problem.
      paths: random() < 0.03 ? [{ ...paths[0]!, path: 'no-slash' }, ...paths.slice(1)] : paths,
      ...(random() < 0.08 ? { defaultBackend: serviceIn(namespaceIndex) } : {}),
      ...(random() < 0.12
        ? { tls: { secretName: pick(['tls-a', 'tls-b', 'tls-missing']), hosts: random() < 0.1 ? ['bad host'] : random() < 0.15 ? ['*.example.com'] : hostName ? [hostName] : [] } }
        : {}),
    };
  };
  const upsert = (spec: IngressSpec): WorldChange => {
    ingresses.set(`${spec.namespace}/${spec.name}`, spec);
    return { resource: 'ingresses', object: ingressObject(spec, ++version), deleted: false };
  };
  const remove = (key: string): WorldChange => {
    const spec = ingresses.get(key)!;
    ingresses.delete(key);
    return { resource: 'ingresses', object: ingressObject(spec, ++version), deleted: true };
  };
  const existing = () => pick([...ingresses.keys()]);

  for (let step = 0; step < steps; step++) {
    const kind = random();
    if (ingresses.size === 0 || kind < 0.15) {
      // A new Ingress.
      yield upsert(randomIngress(`extra-${extra++}`, below(shape.namespaces)));
    } else if (kind < 0.4) {
      // A changed Ingress.
      const spec = ingresses.get(existing())!;
      yield upsert({ ...randomIngress(spec.name, Number(spec.namespace.slice(3))), created: spec.created });
    } else if (kind < 0.52) {
      yield remove(existing());
    } else if (kind < 0.64) {
      // A claim on a host and path another Ingress holds, for another backend, older or newer than it.
      const held = ingresses.get(existing())!;
      const target = held.paths[0]!;
      const namespaceIndex = below(shape.namespaces);
      const spec: IngressSpec = {
        name: `extra-${extra++}`,
        namespace: `ns-${namespaceIndex}`,
        created: held.created === undefined ? START : held.created + (random() < 0.5 ? -1000 : 1000),
        className: 'haproxy',
        host: held.host,
        paths: [{ path: target.path, pathType: random() < 0.7 ? target.pathType : pick(['Exact', 'Prefix']), service: serviceIn(namespaceIndex), port: port() }],
        // Now and then a certificate for the held host too: only its namespace's owner may serve one.
        ...(held.host !== undefined && random() < 0.3 ? { tls: { secretName: pick(['tls-a', 'tls-b']), hosts: [held.host] } } : {}),
      };
      conflicting.push(`${spec.namespace}/${spec.name}`);
      yield upsert(spec);
    } else if (kind < 0.7 && conflicting.length > 0) {
      // A conflict's claimant goes: when it won, the claim it beat wins now.
      const key = conflicting.splice(below(conflicting.length), 1)[0]!;
      if (ingresses.has(key)) yield remove(key);
    } else if (kind < 0.76) {
      // An Ingress moves to another class, or back.
      const spec = ingresses.get(existing())!;
      yield upsert({ ...spec, className: spec.className === 'haproxy' ? 'other' : 'haproxy', annotationClass: undefined });
    } else if (kind < 0.88) {
      const i = below(shape.size);
      const endpoints = Array.from({ length: below(4) }, () => ({ last: 1 + below(6), ready: random() < 0.8 }));
      yield { resource: 'endpointslices', object: sliceObject(i, shape, ++version, endpoints), deleted: random() < 0.1 };
    } else if (kind < 0.95) {
      const i = below(shape.size);
      // Renamed ports and renumbered ones move the backends of Ingresses naming the port by name.
      yield { resource: 'services', object: serviceObject(i, shape, ++version, random() < 0.8 ? 'http' : 'web', random() < 0.8 ? 80 : 81), deleted: random() < 0.15 };
    } else {
      const name = pick(['tls-a', 'tls-b', 'tls-missing']);
      yield { resource: 'secrets', object: secretObject(name, `ns-${below(shape.namespaces)}`, ++version, random() < 0.7), deleted: random() < 0.3 };
    }
  }
}
