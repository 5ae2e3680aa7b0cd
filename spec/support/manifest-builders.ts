import { base64 } from './tls-fixture.ts';

/** YAML manifests for the end-to-end specs and benchmarks, as a user would write them. */

export type ServicePort = { readonly name: string } | { readonly number: number };
export type PathRule = readonly [path: string, type: 'Exact' | 'Prefix', service: string, port: ServicePort];

export function ingress(name: string, host: string | undefined, paths: readonly PathRule[], secretName?: string): string {
  const rules = paths
    .map(([path, type, serviceName, port]) => {
      const portYaml = 'name' in port ? `{ name: ${port.name} }` : `{ number: ${port.number} }`;
      return `          - { path: ${path}, pathType: ${type}, backend: { service: { name: ${serviceName}, port: ${portYaml} } } }`;
    })
    .join('\n');
  const tls = secretName && host ? `  tls: [ { hosts: [${JSON.stringify(host)}], secretName: ${secretName} } ]\n` : '';
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: default }
spec:
  ingressClassName: haproxy
${tls}  rules:
    - ${host ? `host: ${JSON.stringify(host)}\n      ` : ''}http:
        paths:
${rules}
`;
}

export function service(name: string, ports: readonly { readonly name?: string; readonly port: number; readonly targetPort: string | number }[]): string {
  const list = ports.map((p) => `    - { ${p.name ? `name: ${p.name}, ` : ''}port: ${p.port}, targetPort: ${p.targetPort} }`).join('\n');
  return `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: default }\nspec:\n  ports:\n${list}\n`;
}

/** One EndpointSlice with one loopback endpoint: each test backend has a port of its own. */
export function slice(name: string, serviceName: string, portName: string | undefined, port: number, ready = true): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, namespace: default, labels: { kubernetes.io/service-name: ${serviceName} } }
addressType: IPv4
ports: [ { ${portName ? `name: ${portName}, ` : ''}port: ${port} } ]
endpoints: [ { addresses: [127.0.0.1], conditions: { ready: ${ready} } } ]
`;
}

export function tlsSecret(name: string, certificate: string, key: string): string {
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: kubernetes.io/tls\ndata: { tls.crt: ${base64(certificate)}, tls.key: ${base64(key)} }\n`;
}

export const documents = (...parts: readonly string[]) => parts.join('---\n');
