import { base64 } from './tls-fixture.ts';

/** YAML manifests for the end-to-end specs and benchmarks, as a user would write them. */

export type ServicePort = { readonly name: string } | { readonly number: number };
export type PathRule = readonly [path: string, type: 'Exact' | 'Prefix', service: string, port: ServicePort];

export interface IngressOptions {
  readonly namespace?: string;
  /** creationTimestamp: the older Ingress wins a host another namespace claims too. */
  readonly created?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  /** The TLS entry's hosts, when not just the rule's host. */
  readonly tlsHosts?: readonly string[];
}

/** An Ingress with one rule (none without a host and paths), and a TLS entry when a Secret is named. */
export function ingress(name: string, host: string | undefined, paths: readonly PathRule[], secretName?: string, options: IngressOptions = {}): string {
  const rules = paths
    .map(([path, type, serviceName, port]) => {
      const portYaml = 'name' in port ? `{ name: ${port.name} }` : `{ number: ${port.number} }`;
      return `          - { path: ${path}, pathType: ${type}, backend: { service: { name: ${serviceName}, port: ${portYaml} } } }`;
    })
    .join('\n');
  const tlsHosts = options.tlsHosts ?? (host ? [host] : []);
  const tls = secretName && tlsHosts.length > 0 ? `  tls: [ { hosts: ${JSON.stringify(tlsHosts)}, secretName: ${secretName} } ]\n` : '';
  const metadata = [
    `name: ${name}`,
    `namespace: ${options.namespace ?? 'default'}`,
    ...(options.created ? [`creationTimestamp: "${options.created}"`] : []),
    ...(options.annotations ? [`annotations: ${JSON.stringify(options.annotations)}`] : []),
  ].join(', ');
  const ruleList =
    host === undefined && paths.length === 0
      ? ''
      : `  rules:
    - ${host ? `host: ${JSON.stringify(host)}\n      ` : ''}http:
        paths:
${rules}
`;
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { ${metadata} }
spec:
  ingressClassName: haproxy
${tls}${ruleList}`;
}

/** An Ingress of one rule with one Prefix path to port 80, of `className`: what the webhook specs apply and judge. */
export const classIngress = (name: string, host: string, path: string, className = 'haproxy', namespace = 'default', serviceName = 'web') => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  ingressClassName: ${className}
  rules:
    - host: ${host}
      http:
        paths:
          - { path: '${path}', pathType: Prefix, backend: { service: { name: ${serviceName}, port: { number: 80 } } } }
`;

export function service(name: string, ports: readonly { readonly name?: string; readonly port: number; readonly targetPort: string | number }[], namespace = 'default'): string {
  const list = ports.map((p) => `    - { ${p.name ? `name: ${p.name}, ` : ''}port: ${p.port}, targetPort: ${p.targetPort} }`).join('\n');
  return `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: ${namespace} }\nspec:\n  ports:\n${list}\n`;
}

/** One EndpointSlice with one loopback endpoint (or the addresses given, each an endpoint): each test backend has a port of its own. */
export function slice(
  name: string,
  serviceName: string,
  portName: string | undefined,
  port: number,
  ready = true,
  options: { readonly namespace?: string; readonly addresses?: readonly string[]; readonly addressType?: string } = {},
): string {
  const endpoints = (options.addresses ?? ['127.0.0.1']).map((address) => `{ addresses: [${JSON.stringify(address)}], conditions: { ready: ${ready} } }`).join(', ');
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, namespace: ${options.namespace ?? 'default'}, labels: { kubernetes.io/service-name: ${serviceName} } }
addressType: ${options.addressType ?? 'IPv4'}
ports: [ { ${portName ? `name: ${portName}, ` : ''}port: ${port} } ]
endpoints: [ ${endpoints} ]
`;
}

export function tlsSecret(name: string, certificate: string, key: string, namespace = 'default'): string {
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: ${namespace} }\ntype: kubernetes.io/tls\ndata: { tls.crt: ${base64(certificate)}, tls.key: ${base64(key)} }\n`;
}

export const documents = (...parts: readonly string[]) => parts.join('---\n');

/** The GatewayClass of the shipped controller name and a Gateway `gw` in default with these listeners, each a flow-style YAML mapping. */
export function gateway(...listeners: readonly string[]): string {
  return documents(
    `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: haproxy }
spec: { controllerName: haproxy-template-ic.io/gateway-controller }
`,
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: haproxy
  listeners:
${listeners.map((listener) => `    - ${listener}\n`).join('')}`,
  );
}
