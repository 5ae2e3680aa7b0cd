import type { KubeObject } from '../lib/pipeline/model.ts';

/**
 * The reference the render benchmark times the renderer against: the same
 * backends, servers and map lines as the shipped templates produce for the
 * benchmark's world (see world.ts), written by short, plain code: no checks
 * of any value, no conflicts between Ingresses, no line origins, no
 * template, nothing kept for the next render. It trusts every field of
 * every object, so it is only fit to be timed on that world.
 */

export interface BareOutput {
  /** Every backend section of haproxy.cfg, as the shipped template writes them. */
  readonly backends: string;
  readonly hostMap: string;
  readonly exactMap: string;
  readonly prefixMap: string;
}

interface BareBackend {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: string;
}

/** The fields the world's objects are known to hold (see world.ts); nothing here checks them. */
interface IngressSpec {
  readonly ingressClassName: string;
  readonly rules: readonly {
    readonly host?: string;
    readonly http: {
      readonly paths: readonly {
        readonly path: string;
        readonly pathType: string;
        readonly backend: { readonly service: { readonly name: string; readonly port: { readonly name?: string; readonly number?: number } } };
      }[];
    };
  }[];
}
interface ServiceSpec {
  readonly ports: readonly { readonly name?: string; readonly port: number }[];
}
interface SliceFields {
  readonly ports: readonly { readonly name?: string; readonly port: number }[];
  readonly endpoints: readonly { readonly addresses: readonly string[]; readonly conditions?: { readonly ready?: boolean } }[];
}

interface Line {
  readonly key: string;
  readonly value: string;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byKey = (a: Line, b: Line) => compareText(a.key, b.key);
const longestFirst = (a: Line, b: Line) => b.key.length - a.key.length || byKey(a, b);
const text = (lines: readonly Line[]) => lines.map((line) => `${line.key} ${line.value}\n`).join('');

export function bareRender(objects: ReadonlyMap<string, readonly KubeObject[]>): BareOutput {
  const services = new Map<string, ServiceSpec>();
  for (const service of objects.get('services') ?? []) services.set(`${service.metadata.namespace}/${service.metadata.name}`, service['spec'] as ServiceSpec);
  const slices = new Map<string, SliceFields[]>();
  for (const slice of objects.get('endpointslices') ?? []) {
    const key = `${slice.metadata.namespace}/${slice.metadata.labels!['kubernetes.io/service-name']}`;
    const fields = slice as unknown as SliceFields;
    const list = slices.get(key);
    if (list) list.push(fields);
    else slices.set(key, [fields]);
  }

  const hosts = new Map<string, Line>();
  const exact: Line[] = [];
  const prefix: Line[] = [];
  const backends = new Map<string, BareBackend>();
  for (const ingress of objects.get('ingresses') ?? []) {
    const spec = ingress['spec'] as IngressSpec;
    if (spec.ingressClassName !== 'haproxy') continue;
    const namespace = ingress.metadata.namespace!;
    for (const rule of spec.rules) {
      const host = rule.host ?? '*';
      hosts.set(host, { key: host, value: host });
      for (const path of rule.http.paths) {
        const { name: service, port } = path.backend.service;
        // One backend per Service port: a port named by the Ingress is named by its number, as the renderer does.
        const named = port.name === undefined ? undefined : services.get(`${namespace}/${service}`)?.ports.find((candidate) => candidate.name === port.name);
        const portText = named ? String(named.port) : (port.name ?? String(port.number));
        const name = `${namespace}_${service}_${portText}`;
        if (!backends.has(name)) backends.set(name, { name, namespace, service, port: portText });
        const trimmed = path.path.replace(/\/+$/, '');
        if (path.pathType === 'Exact') exact.push({ key: host + path.path, value: name });
        else {
          if (trimmed !== '') exact.push({ key: host + trimmed, value: name });
          prefix.push({ key: `${host}${trimmed}/`, value: name });
        }
      }
    }
  }

  let sections = '';
  for (const backend of [...backends.values()].sort((a, b) => compareText(a.name, b.name))) {
    sections += `\nbackend ${backend.name}\n  balance roundrobin\n`;
    const servicePort = services.get(`${backend.namespace}/${backend.service}`)?.ports.find((port) => port.name === backend.port || String(port.port) === backend.port);
    if (!servicePort) continue;
    const servers: Line[] = [];
    for (const slice of slices.get(`${backend.namespace}/${backend.service}`) ?? []) {
      const port = slice.ports.find((candidate) => (candidate.name ?? '') === (servicePort.name ?? ''))?.port;
      if (port === undefined) continue;
      for (const endpoint of slice.endpoints) {
        if (endpoint.conditions?.ready === false) continue;
        for (const address of endpoint.addresses) servers.push({ key: `srv-${address}-${port}`, value: `${address}:${port}` });
      }
    }
    for (const server of servers.sort(byKey)) sections += `  server ${server.key} ${server.value} check\n`;
  }
  return {
    backends: sections,
    hostMap: text([...hosts.values()].sort(byKey)),
    exactMap: text(exact.sort(byKey)),
    prefixMap: text(prefix.sort(longestFirst)),
  };
}
