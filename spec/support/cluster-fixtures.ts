import type { FakeApiServer, KubeObject } from './fake-apiserver/index.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A ready HAProxy pod as the chart runs it (haproxy and dataplaneapi containers), at `podIP`. */
export function createHaproxyPod(fake: FakeApiServer, namespace: string, name: string, podIP: string): KubeObject {
  const pod = fake.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, labels: { 'app.kubernetes.io/name': 'haproxy' } },
    spec: { containers: [{ name: 'haproxy', image: 'haproxy' }, { name: 'dataplaneapi', image: 'haproxy' }] },
  });
  return fake.updateStatus({ ...pod, status: { phase: 'Running', podIP, containerStatuses: [{ name: 'haproxy', ready: true }, { name: 'dataplaneapi', ready: true }] } });
}

/** The controller's own objects: its namespace, the ConfigMap with `config.yaml`, the credentials Secret. */
export function createControllerObjects(
  fake: FakeApiServer,
  namespace: string,
  options: { readonly config: string; readonly secret: string; readonly username: string; readonly password: string },
): void {
  fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  fake.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name: 'haproxy-config' }, data: { 'config.yaml': options.config } });
  fake.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name: options.secret },
    data: { dataplane_username: b64(options.username), dataplane_password: b64(options.password) },
  });
}
