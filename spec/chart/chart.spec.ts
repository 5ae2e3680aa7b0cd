import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ControllerConfig } from '../../lib/config/types.ts';
import { chartDirectory, helmWithValues, releaseName, releaseNamespace, renderChart, valueSets, type RenderedChart } from './helm.ts';
import { evaluate } from '@marcbachmann/cel-js';
import { validateManifest } from './kubernetes-schemas.ts';
import { configMapData, container, env, envValue, grants, mountPath, selects, workloads, type BindingManifest, type RoleManifest, type ServiceManifest, type Workload } from './manifests.ts';

type ValueSet = keyof typeof valueSets;
const setNames = Object.keys(valueSets) as ValueSet[];

function controllerConfig(chart: RenderedChart): ControllerConfig {
  const configMap = chart.all('ConfigMap').find((m) => m.metadata.name === 'haproxy-config');
  if (configMap === undefined) throw new Error('no ConfigMap haproxy-config');
  const loaded = loadControllerConfig(configMapData(configMap, 'config.yaml'));
  if (!loaded.ok) throw new Error(`the rendered configuration does not load:\n${loaded.errors.join('\n')}`);
  return loaded.config;
}

const controllerOf = (chart: RenderedChart) => chart.one('Deployment') as Workload;
const haproxyOf = (chart: RenderedChart) => chart.one('StatefulSet') as Workload;

describe('Helm chart', function () {
  // helm renders each value set once, before the assertions; the first run also unpacks helm.
  this.timeout(60_000);
  const charts = {} as Record<ValueSet, RenderedChart>;
  before(async () => {
    await Promise.all(setNames.map(async (name) => (charts[name] = await renderChart(valueSets[name]))));
  });

  it('passes helm lint --strict under every value set', async () => {
    const results = await Promise.all(setNames.map((name) => helmWithValues(['lint', '--strict', chartDirectory], valueSets[name])));
    results.forEach((result, i) => expect(result.code, `${setNames[i]}: ${result.stdout}${result.stderr}`).to.equal(0));
  });

  describe('under every value set', () => {
    it('renders manifests that fit the Kubernetes schemas', () => {
      for (const name of setNames) {
        expect(charts[name].manifests.length, name).to.be.greaterThan(5);
        for (const manifest of charts[name].manifests) validateManifest(manifest);
      }
    });

    it('puts every namespaced object in the release namespace, unless RBAC for a watched namespace', () => {
      const clusterScoped = new Set(['ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration']);
      for (const name of setNames) {
        for (const manifest of charts[name].manifests) {
          if (clusterScoped.has(manifest.kind)) expect(manifest.metadata.namespace, `${name} ${manifest.kind}`).to.equal(undefined);
          else if (manifest.metadata.name.endsWith('-watch')) expect(manifest.kind, name).to.be.oneOf(['Role', 'RoleBinding']);
          else expect(manifest.metadata.namespace, `${name} ${manifest.kind} ${manifest.metadata.name}`).to.equal(releaseNamespace);
        }
      }
    });

    it('gives every workload a selector matching its pod labels', () => {
      for (const name of setNames) {
        for (const workload of workloads(charts[name].manifests)) {
          expect(selects(workload.spec.selector.matchLabels, workload.spec.template.metadata.labels), `${name} ${workload.metadata.name}`).to.equal(true);
        }
      }
    });

    it('gives every Service the pods it selects and the ports they declare', () => {
      for (const name of setNames) {
        const pods = workloads(charts[name].manifests);
        for (const service of charts[name].all('Service') as ServiceManifest[]) {
          const selected = pods.filter((w) => selects(service.spec.selector, w.spec.template.metadata.labels));
          expect(selected, `${name}: pods of Service ${service.metadata.name}`).to.have.length(1);
          const declared = selected[0]!.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => p.name));
          for (const port of service.spec.ports) expect(declared, `${name}: ${service.metadata.name} targetPort`).to.include(port.targetPort);
        }
      }
    });

    it('gives every PodDisruptionBudget and NetworkPolicy pods to select', () => {
      for (const name of setNames) {
        const labels = workloads(charts[name].manifests).map((w) => w.spec.template.metadata.labels);
        for (const manifest of [...charts[name].all('PodDisruptionBudget'), ...charts[name].all('NetworkPolicy')]) {
          const spec = manifest['spec'] as { selector?: { matchLabels: Record<string, string> }; podSelector?: { matchLabels: Record<string, string> } };
          const selector = (spec.selector ?? spec.podSelector)!.matchLabels;
          expect(
            labels.filter((l) => selects(selector, l)),
            `${name} ${manifest.kind} ${manifest.metadata.name}`,
          ).to.have.length(1);
        }
      }
    });

    it('binds every role to the ServiceAccount the controller runs as, and grants no wildcard', () => {
      for (const name of setNames) {
        const chart = charts[name];
        const account = controllerOf(chart).spec.template.spec.serviceAccountName;
        expect(chart.one('ServiceAccount', '-haproxy-template-ic').metadata.name, name).to.equal(account);
        const roles = [...chart.all('ClusterRole'), ...chart.all('Role')] as RoleManifest[];
        for (const binding of [...chart.all('ClusterRoleBinding'), ...chart.all('RoleBinding')] as BindingManifest[]) {
          expect(binding.subjects, `${name} ${binding.metadata.name}`).to.deep.equal([{ kind: 'ServiceAccount', name: account, namespace: releaseNamespace }]);
          const role = roles.find((r) => r.kind === binding.roleRef.kind && r.metadata.name === binding.roleRef.name && r.metadata.namespace === binding.metadata.namespace);
          expect(role, `${name}: role of ${binding.metadata.name}`).to.not.equal(undefined);
        }
        for (const rule of roles.flatMap((r) => r.rules)) {
          expect([...rule.apiGroups, ...rule.resources, ...rule.verbs], name).to.not.include('*');
        }
      }
    });

    it('grants read access to every resource the configuration watches, where it watches it', () => {
      for (const name of setNames) {
        const chart = charts[name];
        const cluster = grants((chart.one('ClusterRole') as RoleManifest).rules);
        for (const watched of controllerConfig(chart).watchedResources) {
          const group = watched.apiVersion.includes('/') ? watched.apiVersion.split('/')[0]! : 'core';
          const where = watched.namespace === undefined ? cluster : grants((chart.all('Role') as RoleManifest[]).find((r) => r.metadata.namespace === watched.namespace)?.rules ?? []);
          expect(where[`${group}/${watched.resource}`], `${name}: ${watched.name} in ${watched.namespace ?? 'every namespace'}`).to.deep.equal(['get', 'list', 'watch']);
        }
      }
    });

    it('keeps the service account token out of the HAProxy pods', () => {
      for (const name of setNames.filter((n) => !n.startsWith('haproxyOff'))) {
        const haproxy = haproxyOf(charts[name]);
        expect(haproxy.spec.template.spec.automountServiceAccountToken, name).to.equal(false);
        const account = charts[name].one('ServiceAccount', '-haproxy');
        expect(account.metadata.name).to.equal(haproxy.spec.template.spec.serviceAccountName);
        expect(account['automountServiceAccountToken'], name).to.equal(false);
      }
    });

    it('labels the HAProxy pods so the configuration podSelector finds them', () => {
      for (const name of setNames.filter((n) => !n.startsWith('haproxyOff'))) {
        const podSelector = controllerConfig(charts[name]).podSelector.matchLabels;
        expect(selects(podSelector, haproxyOf(charts[name]).spec.template.metadata.labels), name).to.equal(true);
      }
    });
  });

  describe('with default values', () => {
    let chart: RenderedChart;
    before(() => (chart = charts.defaults));

    it('renders the controller, its access and the HAProxy fleet, nothing optional', () => {
      const kinds = chart.manifests.map((m) => `${m.kind} ${m.metadata.name}`).sort();
      expect(kinds).to.deep.equal([
        `ClusterRole ${releaseName}-haproxy-template-ic`,
        `ClusterRoleBinding ${releaseName}-haproxy-template-ic`,
        `ConfigMap ${releaseName}-haproxy-template-ic-haproxy`,
        'ConfigMap haproxy-config',
        `Deployment ${releaseName}-haproxy-template-ic`,
        `PodDisruptionBudget ${releaseName}-haproxy-template-ic`,
        `PodDisruptionBudget ${releaseName}-haproxy-template-ic-haproxy`,
        `Role ${releaseName}-haproxy-template-ic`,
        `RoleBinding ${releaseName}-haproxy-template-ic`,
        'Secret haproxy-template-ic-credentials',
        `Service ${releaseName}-haproxy-template-ic`,
        `Service ${releaseName}-haproxy-template-ic-haproxy`,
        `Service ${releaseName}-haproxy-template-ic-haproxy-pods`,
        `ServiceAccount ${releaseName}-haproxy-template-ic`,
        `ServiceAccount ${releaseName}-haproxy-template-ic-haproxy`,
        `StatefulSet ${releaseName}-haproxy-template-ic-haproxy`,
        `ValidatingWebhookConfiguration ${releaseName}-haproxy-template-ic`,
      ]);
    });

    it('carries the shipped controller configuration byte for byte', async () => {
      const shipped = await readFile(join(chartDirectory, '..', 'templates', 'config.yaml'), 'utf8');
      expect(configMapData(chart.one('ConfigMap', 'haproxy-config'), 'config.yaml')).to.equal(shipped);
    });

    it('runs the controller image of the package version, with its names, ports, probes, heap ratio and scratch space', async () => {
      const { version } = JSON.parse(await readFile(join(chartDirectory, '..', 'package.json'), 'utf8')) as { version: string };
      const deployment = controllerOf(chart);
      expect(deployment.spec.replicas).to.equal(2);
      const controller = container(deployment, 'controller');
      expect(controller.image).to.equal(`haproxy-template-ic:${version}`);
      // Ingress status carries the address of the chart's HAProxy Service.
      expect(controller.args).to.deep.equal([
        'run',
        '--health-port=8080',
        '--metrics-port=9090',
        `--publish-service=${releaseName}-haproxy-template-ic-haproxy`,
        // Without cert-manager the controller generates the webhook's certificate and sets the caBundle.
        '--webhook-port=9443',
        `--webhook-service=${releaseName}-haproxy-template-ic`,
        `--webhook-secret=${releaseName}-haproxy-template-ic-webhook-tls`,
        '--webhook-generate-certificate',
        `--webhook-configuration=${releaseName}-haproxy-template-ic`,
      ]);
      expect(env(controller, 'POD_NAMESPACE').valueFrom?.fieldRef?.fieldPath).to.equal('metadata.namespace');
      expect(env(controller, 'POD_NAME').valueFrom?.fieldRef?.fieldPath).to.equal('metadata.name');
      expect(envValue(controller, 'CONFIGMAP_NAME')).to.equal('haproxy-config');
      expect(envValue(controller, 'CREDENTIALS_SECRET_NAME')).to.equal(chart.one('Secret').metadata.name);
      expect(envValue(controller, 'LEASE_NAME')).to.equal('haproxy-template-ic-leader');
      expect(envValue(controller, 'LOG_LEVEL')).to.equal('info');
      expect(envValue(controller, 'HAPROXY_TEMPLATE_IC_HEAP_RATIO')).to.equal('0.9');
      expect(envValue(controller, 'TMPDIR')).to.equal('/tmp');
      expect(mountPath(controller, 'tmp')).to.equal('/tmp');
      expect(deployment.spec.template.spec.volumes?.find((v) => v.name === 'tmp')?.emptyDir).to.deep.equal({ sizeLimit: '1Gi' });
      expect(controller.ports).to.deep.equal([
        { name: 'health', containerPort: 8080, protocol: 'TCP' },
        { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
        { name: 'webhook', containerPort: 9443, protocol: 'TCP' },
      ]);
      expect(controller.livenessProbe?.httpGet).to.deep.equal({ path: '/healthz', port: 'health' });
      expect(controller.readinessProbe?.httpGet).to.deep.equal({ path: '/readyz', port: 'health' });
      expect(controller.resources).to.deep.equal({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
    });

    it('hardens the controller: non-root, read-only root file system, no privilege escalation, no capabilities', () => {
      const deployment = controllerOf(chart);
      expect(deployment.spec.template.spec.securityContext).to.include({ runAsNonRoot: true, runAsUser: 10001 });
      expect(container(deployment, 'controller').securityContext).to.deep.equal({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    });

    it('exposes the controller health, metrics and webhook on a ClusterIP Service', () => {
      const service = chart.one('Service', '-haproxy-template-ic') as ServiceManifest;
      expect(service.spec.type).to.equal('ClusterIP');
      expect(service.spec.ports.map((p) => [p.name, p.port, p.targetPort])).to.deep.equal([
        ['health', 8080, 'health'],
        ['metrics', 9090, 'metrics'],
        ['webhook', 9443, 'webhook'],
      ]);
    });

    it('grants the controller exactly what it uses', () => {
      expect(grants((chart.one('ClusterRole') as RoleManifest).rules)).to.deep.equal({
        'discovery.k8s.io/endpointslices': ['get', 'list', 'watch'],
        'networking.k8s.io/ingresses': ['get', 'list', 'watch'],
        'networking.k8s.io/ingresses/status': ['patch'],
        'core/secrets': ['get', 'list', 'watch'],
        'core/services': ['get', 'list', 'watch'],
        'core/namespaces': ['get', 'list', 'watch'],
        'core/configmaps': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/gatewayclasses': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/gatewayclasses/status': ['patch'],
        'gateway.networking.k8s.io/gateways': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/gateways/status': ['patch'],
        'gateway.networking.k8s.io/listenersets': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/listenersets/status': ['patch'],
        'gateway.networking.k8s.io/grpcroutes': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/grpcroutes/status': ['patch'],
        'gateway.networking.k8s.io/httproutes': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/httproutes/status': ['patch'],
        'gateway.networking.k8s.io/tlsroutes': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/tlsroutes/status': ['patch'],
        'gateway.networking.k8s.io/tcproutes': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/tcproutes/status': ['patch'],
        'gateway.networking.k8s.io/backendtlspolicies': ['get', 'list', 'watch'],
        'gateway.networking.k8s.io/backendtlspolicies/status': ['patch'],
        'gateway.networking.k8s.io/referencegrants': ['get', 'list', 'watch'],
        'events.k8s.io/events': ['create', 'patch'],
        [`admissionregistration.k8s.io/validatingwebhookconfigurations#${releaseName}-haproxy-template-ic`]: ['get', 'list', 'update', 'watch'],
      });
      expect(grants((chart.one('Role') as RoleManifest).rules)).to.deep.equal({
        'core/pods': ['list', 'watch'],
        'core/configmaps': ['get', 'list', 'watch'],
        'core/secrets': ['create', 'get', 'list', 'watch'],
        [`core/secrets#${releaseName}-haproxy-template-ic-webhook-tls`]: ['update'],
        'coordination.k8s.io/leases': ['create'],
        'coordination.k8s.io/leases#haproxy-template-ic-leader': ['get', 'update'],
      });
    });

    it('generates the Data Plane API credentials', () => {
      const data = chart.one('Secret')['data'] as Record<string, string>;
      expect(Buffer.from(data['dataplane_username']!, 'base64').toString()).to.equal('admin');
      expect(Buffer.from(data['dataplane_password']!, 'base64').toString()).to.match(/^[A-Za-z0-9]{32}$/);
    });

    it('runs HAProxy in master-worker mode with the master socket, on the configuration file and ports of the configuration', () => {
      const statefulSet = haproxyOf(chart);
      expect(statefulSet.spec.replicas).to.equal(2);
      const haproxy = container(statefulSet, 'haproxy');
      expect(haproxy.image).to.equal('haproxytech/haproxy-debian:3.2.26');
      expect(haproxy.command).to.deep.equal(['/usr/local/sbin/haproxy', '-W', '-db', '-S', '/var/run/haproxy/master.sock,mode,600', '-f', '/etc/haproxy/haproxy.cfg']);
      expect(haproxy.ports?.map((p) => [p.name, p.containerPort])).to.deep.equal([
        ['http', 80],
        ['https', 443],
        ['stats', 8404],
        ['peers', 10000],
      ]);
      // The peers port, on the headless Service too: each pod reaches the others' counters at their pod IPs.
      const pods = chart.one('Service', '-haproxy-pods') as ServiceManifest;
      expect(pods.spec.ports.map((p) => [p.name, p.port, p.targetPort])).to.deep.equal([
        ['dataplane', 5555, 'dataplane'],
        ['peers', 10000, 'peers'],
      ]);
      expect(haproxy.livenessProbe?.httpGet).to.deep.equal({ path: '/healthz', port: 'stats' });
      expect(haproxy.readinessProbe?.httpGet).to.deep.equal({ path: '/ready', port: 'stats' });
      expect(haproxy.resources).to.deep.equal({ requests: { cpu: '200m', memory: '256Mi' } });
    });

    it('runs the Data Plane API beside HAProxy on the same configuration and sockets, with the credentials Secret', () => {
      const statefulSet = haproxyOf(chart);
      const haproxy = container(statefulSet, 'haproxy');
      const dataplane = container(statefulSet, 'dataplaneapi');
      expect(dataplane.image).to.equal('haproxytech/haproxy-debian:3.2.26');
      expect(dataplane.ports).to.deep.equal([{ name: 'dataplane', containerPort: 5555, protocol: 'TCP' }]);
      expect(dataplane.readinessProbe?.tcpSocket).to.deep.equal({ port: 'dataplane' });
      expect(dataplane.resources).to.deep.equal({ requests: { cpu: '100m', memory: '128Mi' } });
      for (const volume of ['haproxy-config', 'haproxy-run']) expect(mountPath(dataplane, volume), volume).to.equal(mountPath(haproxy, volume));
      expect(mountPath(haproxy, 'haproxy-config')).to.equal('/etc/haproxy');
      expect(mountPath(haproxy, 'haproxy-run')).to.equal('/var/run/haproxy');
      const secret = chart.one('Secret').metadata.name;
      expect(env(dataplane, 'DATAPLANE_USERNAME').valueFrom?.secretKeyRef).to.deep.equal({ name: secret, key: 'dataplane_username' });
      expect(env(dataplane, 'DATAPLANE_PASSWORD').valueFrom?.secretKeyRef).to.deep.equal({ name: secret, key: 'dataplane_password' });
    });

    it('hardens the HAProxy pods: non-root, read-only root file systems, low ports through the sysctl, not a capability', () => {
      const pod = haproxyOf(chart).spec.template.spec;
      expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
      expect(pod.securityContext?.['sysctls']).to.deep.equal([{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }]);
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext, c.name).to.deep.equal({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      }
    });

    it('rolls the HAProxy pods when their ConfigMap changes', async () => {
      const changed = await renderChart({ haproxy: { dataplane: { reloadDelay: 3 } } });
      const checksum = (c: RenderedChart) => haproxyOf(c).spec.template.metadata.annotations?.['checksum/haproxy-configmap'];
      expect(checksum(chart)).to.match(/^[0-9a-f]{64}$/);
      expect(checksum(changed))
        .to.match(/^[0-9a-f]{64}$/)
        .and.not.equal(checksum(chart));
    });

    it('exposes HAProxy on a ClusterIP Service: 80 http, 443 https, 8404 stats', () => {
      const service = chart.one('Service', '-haproxy') as ServiceManifest;
      expect(service.spec.type).to.equal('ClusterIP');
      expect(service.spec.ports.map((p) => [p.name, p.port, p.targetPort, p.nodePort])).to.deep.equal([
        ['http', 80, 'http', undefined],
        ['https', 443, 'https', undefined],
        ['stats', 8404, 'stats', undefined],
      ]);
    });

    it('keeps one controller and one HAProxy pod through voluntary disruptions', () => {
      expect((chart.one('PodDisruptionBudget', '-haproxy-template-ic')['spec'] as { minAvailable: number }).minAvailable).to.equal(1);
      expect((chart.one('PodDisruptionBudget', '-haproxy')['spec'] as { maxUnavailable: number }).maxUnavailable).to.equal(1);
    });
  });

  describe('the admission webhook', () => {
    interface Hook {
      readonly name: string;
      readonly failurePolicy: string;
      readonly timeoutSeconds: number;
      readonly sideEffects: string;
      readonly admissionReviewVersions: string[];
      readonly clientConfig: { service: { namespace: string; name: string; path: string; port: number }; caBundle?: string };
      readonly rules: { operations: string[]; apiGroups: string[]; apiVersions: string[]; resources: string[]; scope: string }[];
      readonly namespaceSelector?: unknown;
      readonly matchConditions?: { name: string; expression: string }[];
    }
    const hooksOf = (chart: RenderedChart) => chart.one('ValidatingWebhookConfiguration')['webhooks'] as Hook[];
    const args = (chart: RenderedChart) => container(controllerOf(chart), 'controller').args ?? [];
    const webhookArgs = (chart: RenderedChart) => args(chart).filter((arg) => arg.includes('webhook'));
    const fullname = `${releaseName}-haproxy-template-ic`;
    /** Whether the API server would call the webhook for this object: every match condition true, as CEL evaluates it. */
    const sent = (hook: Hook, object: Record<string, unknown>) => (hook.matchConditions ?? []).every((condition) => evaluate(condition.expression, { object }) === true);

    it('judges what the configuration marks, through the controller Service, on CREATE and UPDATE, Ignore and 5 s by default', () => {
      const chart = charts.defaults;
      const hooks = hooksOf(chart);
      expect(hooks.map((hook) => [hook.name, hook.rules])).to.deep.equal([
        [
          'ingresses.networking.k8s.io.webhook.haproxy-template-ic.io',
          [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], resources: ['ingresses'], scope: 'Namespaced' }],
        ],
        ['secrets.core.webhook.haproxy-template-ic.io', [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'], scope: 'Namespaced' }]],
      ]);
      for (const hook of hooks) {
        expect(hook).to.deep.include({ failurePolicy: 'Ignore', timeoutSeconds: 5, sideEffects: 'None', admissionReviewVersions: ['v1'] });
        expect(hook.clientConfig).to.deep.equal({ service: { namespace: releaseNamespace, name: fullname, path: '/validate', port: 9443 } });
      }
      const service = chart.one('Service', '-haproxy-template-ic') as ServiceManifest;
      expect(service.metadata.name).to.equal(fullname);
      expect(service.spec.ports.find((port) => port.name === 'webhook')?.port).to.equal(9443);
    });

    it('is sent only Ingresses of the class (ingress-nginx #7546) and Secrets of type kubernetes.io/tls, as CEL reads the match conditions', () => {
      const [ingresses, secrets] = hooksOf(charts.defaults);
      const ingress = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({ metadata: { name: 'web', ...(annotations ? { annotations } : {}) }, spec });
      expect(sent(ingresses!, ingress({ ingressClassName: 'haproxy' }))).to.equal(true);
      expect(sent(ingresses!, ingress({}, { 'kubernetes.io/ingress.class': 'haproxy' }))).to.equal(true);
      expect(sent(ingresses!, ingress({ ingressClassName: 'nginx' }, { 'kubernetes.io/ingress.class': 'haproxy' }))).to.equal(false);
      expect(sent(ingresses!, ingress({}, { 'kubernetes.io/ingress.class': 'nginx' }))).to.equal(false);
      expect(sent(ingresses!, ingress({}))).to.equal(false);
      expect(sent(secrets!, { metadata: { name: 's' }, type: 'kubernetes.io/tls' })).to.equal(true);
      expect(sent(secrets!, { metadata: { name: 's' }, type: 'Opaque' })).to.equal(false);
      expect(sent(secrets!, { metadata: { name: 's' } })).to.equal(false);
    });

    it('follows the configuration: a marked resource watched in one namespace is judged there only, with the class the configuration serves', async () => {
      const chart = await renderChart({
        controller: {
          config: {
            extend: {
              ingress: { className: 'edge' },
              watchedResources: { configmaps: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'apps', validationWebhook: true, fieldSelector: 'metadata.name!=skip' } },
            },
          },
        },
      });
      const hooks = hooksOf(chart);
      const configmaps = hooks.find((hook) => hook.name === 'configmaps.core.webhook.haproxy-template-ic.io')!;
      expect(configmaps.namespaceSelector).to.deep.equal({ matchLabels: { 'kubernetes.io/metadata.name': 'apps' } });
      expect(sent(configmaps, { metadata: { name: 'skip' } })).to.equal(false);
      expect(sent(configmaps, { metadata: { name: 'keep' } })).to.equal(true);
      expect(sent(hooks[0]!, { metadata: { name: 'web' }, spec: { ingressClassName: 'edge' } })).to.equal(true);
    });

    it('without cert-manager, has the controller generate the certificate into a Secret and set the caBundle, with the access that takes', () => {
      const chart = charts.defaults;
      expect(webhookArgs(chart)).to.deep.equal([
        '--webhook-port=9443',
        `--webhook-service=${fullname}`,
        `--webhook-secret=${fullname}-webhook-tls`,
        '--webhook-generate-certificate',
        `--webhook-configuration=${fullname}`,
      ]);
      expect(chart.all('Certificate')).to.deep.equal([]);
      expect(chart.one('ValidatingWebhookConfiguration').metadata).to.not.have.property('annotations');
    });

    it('with cert-manager installed, takes its certificate and lets its CA injector set the caBundle', async () => {
      const chart = await renderChart({}, ['cert-manager.io/v1']);
      for (const manifest of chart.manifests) validateManifest(manifest);
      const certificate = chart.one('Certificate');
      const spec = certificate['spec'] as { secretName: string; dnsNames: string[]; issuerRef: { name: string; kind: string } };
      expect(spec.dnsNames).to.deep.equal([`${fullname}.${releaseNamespace}.svc`, `${fullname}.${releaseNamespace}.svc.cluster.local`]);
      expect(spec.issuerRef).to.deep.equal({ name: chart.one('Issuer').metadata.name, kind: 'Issuer' });
      expect(webhookArgs(chart)).to.deep.equal(['--webhook-port=9443', `--webhook-service=${fullname}`, `--webhook-secret=${spec.secretName}`]);
      const metadata = chart.one('ValidatingWebhookConfiguration').metadata as { annotations?: Record<string, string> };
      expect(metadata.annotations).to.deep.equal({ 'cert-manager.io/inject-ca-from': `${releaseNamespace}/${certificate.metadata.name}` });
      const roles = [...Object.keys(grants((chart.one('ClusterRole') as RoleManifest).rules)), ...Object.keys(grants((chart.one('Role') as RoleManifest).rules))].join(' ');
      expect(roles).to.not.include('validatingwebhookconfigurations');
      expect(grants((chart.one('Role') as RoleManifest).rules)['core/secrets']).to.deep.equal(['get', 'list', 'watch']);
      const issued = await renderChart({ webhook: { certificate: { issuerRef: { name: 'corporate-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' } } } }, ['cert-manager.io/v1']);
      expect(issued.all('Issuer')).to.deep.equal([]);
      expect((issued.one('Certificate')['spec'] as { issuerRef: unknown }).issuerRef).to.deep.equal({ name: 'corporate-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
    });

    it("with a Secret of the user's, serves it and sets its CA as the caBundle; failurePolicy Fail when asked", () => {
      const chart = charts.webhookOwnSecret;
      expect(webhookArgs(chart)).to.deep.equal(['--webhook-port=9443', `--webhook-service=${fullname}`, '--webhook-secret=hook-tls', `--webhook-configuration=${fullname}`]);
      for (const hook of hooksOf(chart)) expect(hook.failurePolicy).to.equal('Fail');
      expect(grants((chart.one('Role') as RoleManifest).rules)['core/secrets']).to.deep.equal(['get', 'list', 'watch']);
    });

    it('switched off, leaves no configuration, port or access behind', () => {
      const chart = charts.webhookOff;
      expect(chart.all('ValidatingWebhookConfiguration')).to.deep.equal([]);
      expect(webhookArgs(chart)).to.deep.equal(['--no-webhook']);
      expect((chart.one('Service', '-haproxy-template-ic') as ServiceManifest).spec.ports.map((port) => port.name)).to.deep.equal(['health', 'metrics']);
      expect(JSON.stringify(chart.one('ClusterRole'))).to.not.include('validatingwebhookconfigurations');
    });

    it('refuses a certificate source it does not know, and source secret without its Secret', async () => {
      const wrong = await helmWithValues(['template', releaseName, chartDirectory], { webhook: { certificate: { source: 'vault' } } });
      expect(wrong.code).to.not.equal(0);
      const missing = await helmWithValues(['template', releaseName, chartDirectory], { webhook: { certificate: { source: 'secret' } } });
      expect(missing.stderr).to.include('webhook.certificate.secretName is required with webhook.certificate.source secret');
    });
  });

  describe('with HAProxy off', () => {
    it('renders the controller without any HAProxy object', () => {
      const chart = charts.haproxyOff;
      expect(chart.all('StatefulSet')).to.deep.equal([]);
      expect(chart.manifests.filter((m) => m.metadata.name.includes('-haproxy-template-ic-haproxy')).map((m) => m.kind)).to.deep.equal([]);
      expect(controllerOf(chart).metadata.name).to.equal(`${releaseName}-haproxy-template-ic`);
      expect(grants((chart.one('Role') as RoleManifest).rules)['core/pods']).to.deep.equal(['list', 'watch']);
      // No chart Service to publish: Ingress status is left alone.
      expect(container(controllerOf(chart), 'controller').args?.some((arg) => arg.startsWith('--publish-service'))).to.equal(false);
    });

    it('publishes the Service named in controller.publishService', () => {
      expect(container(controllerOf(charts.haproxyOffPublished), 'controller').args).to.include('--publish-service=edge/lb');
    });
  });

  describe('with a NodePort Service', () => {
    it('sets the requested node ports on the HAProxy Service', () => {
      const service = charts.nodePort.one('Service', '-haproxy') as ServiceManifest;
      expect(service.spec.type).to.equal('NodePort');
      expect(service.spec.ports.map((p) => [p.name, p.nodePort])).to.deep.equal([
        ['http', 30080],
        ['https', 30443],
        ['stats', 30404],
      ]);
    });
  });

  describe('with TLS to the Data Plane API', () => {
    let chart: RenderedChart;
    before(() => (chart = charts.dataplaneTls));

    it('switches the configuration to https', () => {
      expect(controllerConfig(chart).dataplane.scheme).to.equal('https');
    });

    it('gives the controller the CA and its client certificate, never the server key', () => {
      const deployment = controllerOf(chart);
      const controller = container(deployment, 'controller');
      expect(controller.args).to.include.members([
        '--dataplane-ca-file=/etc/haproxy-template-ic/dataplane-ca/ca.crt',
        '--dataplane-server-name=haproxy.edge.svc',
        '--dataplane-cert-file=/etc/haproxy-template-ic/dataplane-client/tls.crt',
        '--dataplane-key-file=/etc/haproxy-template-ic/dataplane-client/tls.key',
      ]);
      const volumes = deployment.spec.template.spec.volumes ?? [];
      expect(volumes.find((v) => v.name === 'dataplane-ca')?.secret).to.deep.equal({ secretName: 'dataplane-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
      expect(volumes.find((v) => v.name === 'dataplane-client')?.secret?.secretName).to.equal('controller-client-tls');
      expect(mountPath(controller, 'dataplane-ca')).to.equal('/etc/haproxy-template-ic/dataplane-ca');
    });

    it('serves the Data Plane API with the certificate and requires client certificates', () => {
      const statefulSet = haproxyOf(chart);
      expect(mountPath(container(statefulSet, 'dataplaneapi'), 'dataplaneapi-tls')).to.equal('/etc/dataplaneapi/tls');
      expect(statefulSet.spec.template.spec.volumes?.find((v) => v.name === 'dataplaneapi-tls')?.secret?.secretName).to.equal('dataplane-tls');
      const settings = load(configMapData(chart.one('ConfigMap', '-haproxy'), 'dataplaneapi.yaml')) as { dataplaneapi: Record<string, unknown> };
      expect(settings.dataplaneapi['scheme']).to.deep.equal(['https']);
      expect(settings.dataplaneapi['tls']).to.deep.equal({
        tls_host: '0.0.0.0',
        tls_port: 5555,
        tls_certificate: '/etc/dataplaneapi/tls/tls.crt',
        tls_key: '/etc/dataplaneapi/tls/tls.key',
        tls_ca: '/etc/dataplaneapi/tls/ca.crt',
      });
      expect(settings.dataplaneapi).to.not.have.property('port');
    });
  });

  describe('the GatewayClass', () => {
    it('is created when asked, for the controller name the configuration serves, and fits its CRD', async () => {
      const chart = await renderChart({ gatewayClass: { create: true, name: 'edge' }, controller: { config: { extend: { gatewayApi: { controllerName: 'example.com/edge' } } } } }, [
        'gateway.networking.k8s.io/v1/GatewayClass',
      ]);
      const gatewayClass = chart.one('GatewayClass');
      validateManifest(gatewayClass);
      expect(gatewayClass.metadata).to.deep.include({ name: 'edge' });
      expect(gatewayClass.metadata.namespace).to.equal(undefined);
      expect(gatewayClass['spec']).to.deep.equal({ controllerName: 'example.com/edge' });
      expect(controllerConfig(chart).gatewayApi.controllerName).to.equal('example.com/edge');
    });

    it("maps Gateway listener ports onto the HAProxy Service's ports, unless the configuration sets its own", async () => {
      expect(controllerConfig(charts.defaults).gatewayApi).to.deep.include({ httpPort: 80, httpsPort: 443 });
      const moved = await renderChart({ haproxy: { service: { ports: { http: 8080, https: 8443 } } } }, []);
      expect(controllerConfig(moved).gatewayApi).to.deep.include({ httpPort: 8080, httpsPort: 8443 });
      const own = await renderChart({ haproxy: { service: { ports: { http: 8080, https: 8443 } } }, controller: { config: { extend: { gatewayApi: { httpsPort: 9443 } } } } }, []);
      expect(controllerConfig(own).gatewayApi).to.deep.include({ httpPort: 8080, httpsPort: 9443 });
    });

    it('is not created by default, and refuses to be where the Gateway API CRDs are not installed', async () => {
      expect(charts.defaults.all('GatewayClass')).to.deep.equal([]);
      const result = await helmWithValues(['template', releaseName, chartDirectory, '--namespace', releaseNamespace], { gatewayClass: { create: true } });
      expect(result.code).to.not.equal(0);
      expect(result.stderr).to.contain('gatewayClass.create needs the Gateway API CRDs');
    });
  });

  describe('with the ServiceMonitor on', () => {
    it('scrapes the controller Service metrics port at /metrics', () => {
      const chart = charts.serviceMonitor;
      const monitor = chart.one('ServiceMonitor');
      expect(monitor.metadata.labels).to.include({ release: 'prometheus' });
      const spec = monitor['spec'] as {
        selector: { matchLabels: Record<string, string> };
        namespaceSelector: { matchNames: string[] };
        endpoints: { port: string; path: string; interval: string }[];
      };
      const scraped = (chart.all('Service') as ServiceManifest[]).filter((s) => selects(spec.selector.matchLabels, s.metadata.labels ?? {}));
      expect(scraped.map((s) => s.metadata.name)).to.deep.equal([`${releaseName}-haproxy-template-ic`]);
      expect(scraped[0]!.spec.ports.map((p) => p.name)).to.include(spec.endpoints[0]!.port);
      expect(spec.endpoints).to.deep.equal([{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
      expect(spec.namespaceSelector.matchNames).to.deep.equal([releaseNamespace]);
    });
  });

  describe('with NetworkPolicies on', () => {
    it('lets only the controller reach the Data Plane API', () => {
      const chart = charts.networkPolicy;
      const policy = chart.one('NetworkPolicy', '-haproxy')['spec'] as {
        ingress: { from?: { podSelector: { matchLabels: Record<string, string> } }[]; ports: { port: string }[] }[];
      };
      const dataplaneRules = policy.ingress.filter((rule) => rule.ports.some((p) => p.port === 'dataplane'));
      expect(dataplaneRules).to.have.length(1);
      expect(dataplaneRules[0]!.ports.map((p) => p.port)).to.deep.equal(['dataplane']);
      const from = dataplaneRules[0]!.from ?? [];
      expect(from).to.have.length(1);
      expect(selects(from[0]!.podSelector.matchLabels, controllerOf(chart).spec.template.metadata.labels)).to.equal(true);
      expect(selects(from[0]!.podSelector.matchLabels, haproxyOf(chart).spec.template.metadata.labels)).to.equal(false);
      const open = policy.ingress.filter((rule) => rule.from === undefined).flatMap((rule) => rule.ports.map((p) => p.port));
      expect(open).to.deep.equal(['http', 'https', 'stats']);
    });

    it('lets only the other HAProxy pods reach the peers port', () => {
      const chart = charts.networkPolicy;
      const policy = chart.one('NetworkPolicy', '-haproxy')['spec'] as {
        ingress: { from?: { podSelector: { matchLabels: Record<string, string> } }[]; ports: { port: string }[] }[];
      };
      const peerRules = policy.ingress.filter((rule) => rule.ports.some((p) => p.port === 'peers'));
      expect(peerRules.map((rule) => rule.ports.map((p) => p.port))).to.deep.equal([['peers']]);
      const from = peerRules[0]!.from ?? [];
      expect(from).to.have.length(1);
      expect(selects(from[0]!.podSelector.matchLabels, haproxyOf(chart).spec.template.metadata.labels)).to.equal(true);
      expect(selects(from[0]!.podSelector.matchLabels, controllerOf(chart).spec.template.metadata.labels)).to.equal(false);
    });
  });

  describe('with HTTP/3', () => {
    it('is off by default, on with auto for an HAProxy image of 3.2 or later, and says so in the configuration', async () => {
      expect(controllerConfig(charts.http3).templateValues).to.include({ http3: true, http3AdvertisedPort: 8443 });
      expect(controllerConfig(charts.defaults).templateValues['http3']).to.equal(false);
      expect(controllerConfig(await renderChart({ haproxy: { http3: 'auto', image: { tag: '3.0.11' } } })).templateValues['http3']).to.equal(false);
      expect(controllerConfig(await renderChart({ haproxy: { http3: 'auto', image: { tag: '3.4' } } })).templateValues['http3']).to.equal(true);
      expect(controllerConfig(await renderChart({ haproxy: { http3: false, image: { tag: '3.2.26' } } })).templateValues['http3']).to.equal(false);
      expect(controllerConfig(await renderChart({ haproxy: { http3: true } })).templateValues['http3']).to.equal(true);
    });

    it('keeps an advertised port the configuration names over the Service port', async () => {
      const chart = await renderChart({ haproxy: { image: { tag: '3.2.26' } }, controller: { config: { extend: { templateValues: { http3AdvertisedPort: 31443 } } } } });
      expect(controllerConfig(chart).templateValues['http3AdvertisedPort']).to.equal(31443);
    });

    it('exposes UDP on the HTTPS container port: the pod, the Service (its own port and node port) and the NetworkPolicy', () => {
      const haproxy = container(haproxyOf(charts.http3), 'haproxy');
      expect(haproxy.ports?.map((p) => [p.name, p.containerPort, p.protocol])).to.deep.include.members([
        ['https', 443, 'TCP'],
        ['quic', 443, 'UDP'],
      ]);
      const service = charts.http3.one('Service', '-haproxy') as ServiceManifest;
      expect(service.spec.ports.map((p) => [p.name, p.port, p.targetPort, p.protocol, p.nodePort])).to.deep.equal([
        ['http', 80, 'http', 'TCP', undefined],
        ['https', 443, 'https', 'TCP', 30443],
        ['stats', 8404, 'stats', 'TCP', undefined],
        ['quic', 8443, 'quic', 'UDP', 30443],
      ]);
      const policy = charts.http3.one('NetworkPolicy', '-haproxy')['spec'] as { ingress: { from?: unknown; ports: { port: string; protocol: string }[] }[] };
      expect(policy.ingress.filter((rule) => rule.from === undefined).flatMap((rule) => rule.ports)).to.deep.include({ port: 'quic', protocol: 'UDP' });
    });

    it('exposes no UDP port without it', () => {
      expect(container(haproxyOf(charts.defaults), 'haproxy').ports?.map((p) => p.protocol)).to.deep.equal(['TCP', 'TCP', 'TCP', 'TCP']);
      expect((charts.defaults.one('Service', '-haproxy') as ServiceManifest).spec.ports.map((p) => p.name)).to.deep.equal(['http', 'https', 'stats']);
    });
  });

  describe('with an extended configuration', () => {
    let chart: RenderedChart;
    before(() => (chart = charts.extendedConfig));

    it('lays the HAProxy pods out by the configuration: ports, Data Plane API port, pod labels', () => {
      const statefulSet = haproxyOf(chart);
      expect(container(statefulSet, 'haproxy').ports?.map((p) => [p.name, p.containerPort])).to.deep.equal([
        ['http', 8080],
        ['https', 443],
        ['stats', 8404],
        ['peers', 10000],
      ]);
      expect(container(statefulSet, 'dataplaneapi').ports?.[0]?.containerPort).to.equal(5556);
      expect(statefulSet.spec.template.metadata.labels).to.include({ 'example.com/fleet': 'edge', 'app.kubernetes.io/name': 'haproxy' });
      expect(controllerConfig(chart).dataplane.port).to.equal(5556);
    });

    it('grants a resource watched in one namespace with a Role there', () => {
      const role = (chart.all('Role') as RoleManifest[]).find((r) => r.metadata.namespace === 'apps');
      expect(grants(role?.rules ?? [])).to.deep.equal({ 'core/configmaps': ['get', 'list', 'watch'] });
      expect(chart.all('RoleBinding').filter((b) => b.metadata.namespace === 'apps')).to.have.length(1);
      expect(grants((chart.one('ClusterRole') as RoleManifest).rules)).to.not.have.property('core/configmaps');
    });
  });

  describe('refuses bad values with an error naming the setting', () => {
    const refusals: [string, object, RegExp][] = [
      ['a heap ratio above 1', { controller: { heapRatio: 2 } }, /\/controller\/heapRatio/],
      ['an unknown value', { haproxy: { replicas: 3 } }, /\/haproxy.*additional properties 'replicas' not allowed/],
      ['TLS without its Secret', { dataplane: { tls: { enabled: true } } }, /dataplane\.tls\.secretName is required when dataplane\.tls\.enabled is true/],
      ['a configuration that is not YAML', { controller: { config: { replace: 'podSelector: [' } } }, /controller\.config\.replace is not a YAML mapping/],
      ['https in the configuration without TLS', { controller: { config: { extend: { dataplane: { scheme: 'https' } } } } }, /dataplane\.scheme: https but dataplane\.tls\.enabled is false/],
      [
        'a podSelector contradicting the HAProxy pod labels',
        { controller: { config: { extend: { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'lb' } } } } } },
        /podSelector\.matchLabels\.app\.kubernetes\.io\/component is "lb"/,
      ],
    ];
    for (const [what, values, message] of refusals) {
      it(`refuses ${what}`, async () => {
        const result = await helmWithValues(['template', releaseName, chartDirectory], values);
        expect(result.code).to.not.equal(0);
        expect(result.stderr).to.match(message);
      });
    }
  });
});
