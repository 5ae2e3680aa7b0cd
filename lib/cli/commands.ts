import type { CommandSpec } from './arguments.ts';
import { runDefaults } from './run-settings.ts';

/**
 * The commands and their options: what the command line accepts, its usage
 * text, and the CLI reference (docs/reference/cli.md) are all read from here.
 */

const configOption = {
  type: 'string',
  description: 'The controller configuration (YAML).',
  defaultText: 'the shipped templates/config.yaml',
} as const;

export const commands: readonly CommandSpec[] = [
  {
    name: 'render',
    summary: 'Render Kubernetes manifests into haproxy.cfg, maps, certificates and files.',
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests (every file, multi-document).' },
      out: { type: 'string', description: 'The directory to write into; it is also the base directory of the render.' },
      config: configOption,
    },
  },
  {
    name: 'local',
    summary: 'Run the controller on a folder of manifests against a HAProxy on this machine.',
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests, watched for changes.' },
      config: { ...configOption, description: 'The controller configuration (YAML), watched for changes.' },
      'work-dir': { type: 'string', description: "HAProxy's directory: haproxy.cfg, maps/, ssl/, general/, sockets.", defaultText: '<temp dir>/haproxy-template-ic-local' },
      'bind-address': { type: 'string', description: 'The address HAProxy binds.', defaultText: '127.0.0.1' },
      'http-port': { type: 'string', description: 'HAProxy HTTP port.', defaultText: '18080' },
      'https-port': { type: 'string', description: 'HAProxy HTTPS port (used when TLS Secrets exist).', defaultText: '18443' },
      'status-port': { type: 'string', description: 'HAProxy status port (/healthz, /ready, /stats).', defaultText: '18404' },
      'health-port': { type: 'string', description: 'Controller /healthz and /readyz.', defaultText: '8080' },
      'metrics-port': { type: 'string', description: 'Controller /metrics.', defaultText: '9090' },
      'dataplane-url': {
        type: 'string',
        multiple: true,
        description: 'Deploy to this HAProxy Data Plane API (repeatable) instead of a HAProxy on this machine.',
      },
      'dataplane-user': { type: 'string', description: 'Data Plane API user.' },
      'dataplane-password-file': { type: 'string', description: 'File holding the Data Plane API password.' },
      'keep-haproxy': {
        type: 'boolean',
        description:
          'Leave HAProxy serving when the controller stops (SIGINT, SIGTERM), for the next controller on the same --work-dir to attach to. Without it, stopping the controller stops HAProxy.',
      },
    },
  },
  {
    name: 'run',
    summary: 'Run the controller in a Kubernetes cluster (in-cluster credentials, or KUBECONFIG outside).',
    options: {
      namespace: { type: 'string', description: "Namespace of the controller's ConfigMap, Secret, Lease and the HAProxy pods.", defaultText: "POD_NAMESPACE, or the pod's own namespace" },
      configmap: { type: 'string', description: 'ConfigMap holding the controller configuration under config.yaml (env CONFIGMAP_NAME).', defaultText: runDefaults.configMap },
      secret: {
        type: 'string',
        description: 'Secret with the Data Plane API credentials, keys dataplane_username and dataplane_password (env CREDENTIALS_SECRET_NAME).',
        defaultText: runDefaults.credentialsSecret,
      },
      identity: { type: 'string', description: "This replica's name for leader election and events.", defaultText: 'POD_NAME' },
      lease: { type: 'string', description: 'Lease used for leader election (env LEASE_NAME).', defaultText: runDefaults.lease },
      'lease-duration': { type: 'string', description: 'How long a lease holds without renewal.', defaultText: runDefaults.leaseDuration },
      'renew-deadline': { type: 'string', description: 'A leader that cannot renew for this long steps down.', defaultText: runDefaults.renewDeadline },
      'retry-period': { type: 'string', description: 'How often replicas try to take or renew the lease.', defaultText: runDefaults.retryPeriod },
      'no-leader-election': { type: 'boolean', description: 'Deploy without a lease (a single replica only).' },
      'publish-service': { type: 'string', description: 'NAME or NAMESPACE/NAME of the HAProxy Service whose address Ingress status carries (env PUBLISH_SERVICE).' },
      'dataplane-ca-file': { type: 'string', description: 'CA bundle for HTTPS to the Data Plane API.' },
      'dataplane-cert-file': { type: 'string', description: 'Client certificate for mutual TLS to the Data Plane API.' },
      'dataplane-key-file': { type: 'string', description: 'Key of the client certificate.' },
      'dataplane-server-name': { type: 'string', description: 'Name the Data Plane API certificate is checked against (pods are reached by IP).' },
      'dataplane-container': { type: 'string', description: 'Container of HAProxy pods whose readiness means the Data Plane API is up.', defaultText: runDefaults.dataplaneContainer },
      kubeconfig: { type: 'string', description: 'A kubeconfig file.', defaultText: 'KUBECONFIG, ~/.kube/config, or in-cluster credentials' },
      'bind-address': { type: 'string', description: 'Address of the health and metrics servers.', defaultText: runDefaults.bindAddress },
      'health-port': { type: 'string', description: 'Controller /healthz and /readyz.', defaultText: String(runDefaults.healthPort) },
      'metrics-port': { type: 'string', description: 'Controller /metrics.', defaultText: String(runDefaults.metricsPort) },
      'webhook-port': {
        type: 'string',
        description: 'HTTPS port of the validating admission webhook (POST /validate, GET /healthz), served by every replica.',
        defaultText: String(runDefaults.webhookPort),
      },
      'no-webhook': { type: 'boolean', description: 'Serve no admission webhook.' },
      'webhook-cert-file': { type: 'string', description: "The webhook's serving certificate (PEM), re-read when it changes." },
      'webhook-key-file': { type: 'string', description: 'Its private key.' },
      'webhook-secret': {
        type: 'string',
        description: "A kubernetes.io/tls Secret of --namespace holding the webhook's certificate (tls.crt, tls.key, ca.crt), followed as it changes (env WEBHOOK_SECRET).",
        defaultText: 'a certificate generated in memory at start',
      },
      'webhook-generate-certificate': {
        type: 'boolean',
        description: 'Generate a CA and certificate into --webhook-secret when it does not exist, and renew them, so every replica serves the same one.',
      },
      'webhook-service': {
        type: 'string',
        description: 'NAME or NAMESPACE/NAME of the Service the API server calls the webhook through: the names of a generated certificate (env WEBHOOK_SERVICE).',
        defaultText: runDefaults.webhookService,
      },
      'webhook-configuration': {
        type: 'string',
        description:
          "The ValidatingWebhookConfiguration whose caBundle the controller keeps equal to its certificate's CA (env WEBHOOK_CONFIGURATION); leave out when cert-manager's CA injector does it.",
      },
    },
  },
  {
    name: 'validate',
    summary: "Run the configuration's validationTests and print a table of results.",
    options: { config: configOption },
  },
  {
    name: 'annotations',
    summary:
      "Report what each Ingress's haproxy.org/ and nginx.ingress.kubernetes.io/ annotations will do here: honoured, ignored and why, invalid and why, basic-auth users who cannot log in, and a summary by annotation.",
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests (every file, multi-document); auth Secrets are looked up among them.' },
      kubeconfig: { type: 'string', description: 'A kubeconfig file: read the Ingresses (and the auth Secrets they name) from its current cluster instead.' },
      namespace: { type: 'string', description: 'With --kubeconfig: only the Ingresses of this namespace.', defaultText: 'all namespaces' },
      config: {
        ...configOption,
        description: 'The controller configuration (YAML): the class it serves (ingress.className) and the namespaces that share hosts (ingress.sharedHostNamespaces).',
      },
    },
  },
  { name: 'version', summary: 'Print the version and exit.', options: {} },
];
