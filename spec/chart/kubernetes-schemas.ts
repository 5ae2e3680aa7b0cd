import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { Manifest } from './helm.ts';

/**
 * Checks manifests against the Kubernetes OpenAPI schemas (kubernetes-models
 * stands in for kubeconform: types, required fields, formats; it does not
 * reject unknown fields). The ServiceMonitor is a CRD without a schema here:
 * its shape is checked by hand.
 */

type Validated = new (data: never) => { validate(): void };

const models: Readonly<Record<string, Validated>> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': ValidatingWebhookConfiguration,
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields Prometheus Operator's ServiceMonitor CRD requires or the chart sets, with their types. */
function checkServiceMonitor(manifest: Manifest): void {
  const problems: string[] = [];
  const spec = manifest['spec'];
  if (!isRecord(spec)) throw new Error('spec must be an object');
  const selector = spec['selector'];
  if (!isRecord(selector) || !isRecord(selector['matchLabels'])) problems.push('spec.selector.matchLabels must be an object');
  else if (!Object.values(selector['matchLabels']).every((value) => typeof value === 'string')) problems.push('spec.selector.matchLabels values must be strings');
  const namespaces = isRecord(spec['namespaceSelector']) ? spec['namespaceSelector']['matchNames'] : undefined;
  if (!Array.isArray(namespaces) || !namespaces.every((name) => typeof name === 'string')) problems.push('spec.namespaceSelector.matchNames must be a list of names');
  const endpoints = spec['endpoints'];
  if (!Array.isArray(endpoints) || endpoints.length === 0) problems.push('spec.endpoints must be a non-empty list');
  else {
    endpoints.forEach((endpoint: unknown, i) => {
      if (!isRecord(endpoint)) return problems.push(`spec.endpoints[${i}] must be an object`);
      if (typeof endpoint['port'] !== 'string') problems.push(`spec.endpoints[${i}].port must be a port name`);
      if (typeof endpoint['path'] !== 'string' || !endpoint['path'].startsWith('/')) problems.push(`spec.endpoints[${i}].path must be an absolute path`);
      for (const duration of ['interval', 'scrapeTimeout']) {
        // The CRD's pattern for Prometheus durations.
        if (!/^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/.test(String(endpoint[duration]))) {
          problems.push(`spec.endpoints[${i}].${duration} must be a duration such as 30s`);
        }
      }
      return undefined;
    });
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/**
 * The fields cert-manager's Issuer and Certificate CRDs require or the chart
 * sets (cert-manager.io/v1), with their types.
 */
function checkCertManager(manifest: Manifest): void {
  const problems: string[] = [];
  const spec = manifest['spec'];
  if (!isRecord(spec)) throw new Error('spec must be an object');
  if (manifest.kind === 'Issuer') {
    const kinds = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter((kind) => isRecord(spec[kind]));
    if (kinds.length !== 1) problems.push('spec must set exactly one issuer type');
  } else {
    if (typeof spec['secretName'] !== 'string' || spec['secretName'] === '') problems.push('spec.secretName is required');
    const issuer = spec['issuerRef'];
    if (!isRecord(issuer) || typeof issuer['name'] !== 'string') problems.push('spec.issuerRef.name is required');
    const names = spec['dnsNames'];
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) problems.push('spec.dnsNames must be a list of names');
    const key = spec['privateKey'];
    if (isRecord(key) && !['RSA', 'ECDSA', 'Ed25519'].includes(String(key['algorithm']))) problems.push('spec.privateKey.algorithm must be RSA, ECDSA or Ed25519');
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/**
 * The fields the Gateway API GatewayClass CRD requires
 * (config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml in
 * kubernetes-sigs/gateway-api): a cluster-scoped object whose
 * spec.controllerName is a domain, '/' and a path.
 */
function checkGatewayClass(manifest: Manifest): void {
  const spec = manifest['spec'];
  if (!isRecord(spec)) throw new Error('spec must be an object');
  const name = spec['controllerName'];
  const controllerName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
  if (typeof name !== 'string' || name.length > 253 || !controllerName.test(name)) throw new Error('spec.controllerName must be a domain, "/" and a path');
  if (manifest.metadata?.namespace !== undefined) throw new Error('a GatewayClass is cluster-scoped: no metadata.namespace');
}

/** Throws with the manifest's kind and name when it does not fit its schema, or has none. */
export function validateManifest(manifest: Manifest): void {
  const what = `${manifest.kind} ${manifest.metadata?.name ?? '(no name)'}`;
  try {
    if (manifest.apiVersion === 'monitoring.coreos.com/v1' && manifest.kind === 'ServiceMonitor') return checkServiceMonitor(manifest);
    if (manifest.apiVersion === 'cert-manager.io/v1' && (manifest.kind === 'Issuer' || manifest.kind === 'Certificate')) return checkCertManager(manifest);
    if (manifest.apiVersion === 'gateway.networking.k8s.io/v1' && manifest.kind === 'GatewayClass') return checkGatewayClass(manifest);
    const model = models[`${manifest.apiVersion}/${manifest.kind}`];
    if (model === undefined) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}: add it to spec/chart/kubernetes-schemas.ts`);
    new model(manifest as never).validate();
  } catch (error) {
    throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
