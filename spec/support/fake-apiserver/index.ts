/**
 * A fake Kubernetes API server for tests, faithful to the protocol the
 * controller's real client code speaks: @kubernetes/client-node's
 * informers, CRUD and status calls, and kubectl, over real HTTP on
 * 127.0.0.1 (no API server binary exists where the tests run).
 *
 *   const fake = await startFakeApiServer({ timeScale: 600 });   // a minute of server time in 100 ms
 *   const kc = new KubeConfig();
 *   kc.loadFromFile(fake.kubeconfigPath);   // http://127.0.0.1:PORT with a bearer token
 *   fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'web' }, spec: {} });
 *   ... the controller runs against it; tests read back with fake.get(...),
 *       inject faults with fake.faults, count calls with fake.requests ...
 *   await fake.close();
 *
 * Two things a controller meets here as in a cluster and must handle:
 * built-in types' LIST items carry no kind or apiVersion (WATCH objects
 * do), and MicroTime fields (Event eventTime, Lease renewTime) need six
 * fractional digits: client-node's V1MicroTime, not a Date.
 *
 * What it does as a cluster does (see the modules for details):
 * - types registered generically (built-ins: resource-types.ts; custom
 *   resources with registerCustomResource, the versions of one CRD sharing
 *   their objects through storageVersion; the Gateway API's kinds in
 *   gateway-api-types.ts), namespaced and cluster paths;
 *   namespaces default, kube-system, kube-public, kube-node-lease exist;
 * - one global integer resourceVersion moved by every write; uid,
 *   creationTimestamp and generation set by the server; writes that change
 *   nothing store nothing and send no event;
 * - LIST with selectors, pages and resourceVersion semantics
 *   (resource-api.ts); WATCH with replay, selectors, bookmarks on the watch
 *   cache's schedule (the first a minute after the watch opens), timeouts
 *   and 410 Expired (watch-session.ts);
 * - Events expire an hour after their last write (event-expiry.ts), and an
 *   Event about a cluster-scoped object lives in default or kube-system
 *   only (builtin-validation.ts);
 * - a clock that can run faster than real time (`timeScale`), so specs see
 *   a real server's minutes in milliseconds;
 * - validating admission webhooks (ValidatingWebhookConfigurations) on
 *   every create, update and patch over HTTP, called over HTTPS as a real
 *   server calls them (admission.ts);
 * - POST/PUT/PATCH/DELETE with Status errors (409 AlreadyExists and
 *   Conflict, 404, 422 Invalid, 400, 415), the status subresource, dry
 *   runs, JSON / merge / strategic merge patches (patch.ts), admission of
 *   namespaced objects into existing namespaces only;
 * - defaults the controller reads (Namespace label and phase, Secret
 *   stringData, Service type, ports and cluster IP, EndpointSlice port
 *   protocols: builtin-defaults.ts); validation of names, labels,
 *   annotations, Events, Leases and Ingress paths, and MicroTime fields
 *   decoded strictly (builtin-validation.ts, micro-time.ts);
 * - discovery and the OpenAPI kubectl needs (discovery.ts, openapi.ts);
 *   a kubeconfig with a bearer token the server can require (401 without
 *   it), over HTTP or HTTPS.
 *
 * Known differences from a real API server: no aggregated discovery,
 * OpenAPI without schemas (fieldValidation is accepted and not enforced),
 * no Table output (kubectl prints its own columns), no
 * server-side apply; JSON only on the way out; no other defaulting (Pods
 * get none, Services no node ports) and no schema validation; no finalizers,
 * graceful deletion or garbage collection (DELETE removes at once; a
 * Namespace takes its objects with it); no managedFields; strategic merge
 * patch without Go patch metadata (see patch.ts); validation messages name
 * fields as the real ones do but are worded by the fake; a resourceVersion
 * the server has not reached is refused at once (the real one waits up to
 * 3 s first). Loopback addresses in EndpointSlices are let through (the
 * specs' backends live on loopback; a real server refuses them:
 * ValidateEndpointIP in kubernetes pkg/apis/core/validation/validation.go);
 * no RBAC (a just-restarted real server denies for a moment what it allows
 * once its informers have synced), no 429 while starting.
 *
 * Last compared with kube-apiserver v1.34.4 (.ci/build-kube-peers), against
 * which spec/e2e/real-apiserver*.spec.ts run the cluster-mode and webhook
 * scenarios of the specs that use this fake.
 *
 * The in-process API (create, update, get, ...) writes through the same
 * rules as HTTP except admission (namespaces and webhooks), so tests can set
 * up objects in namespaces they never created, past any webhook; watchers
 * see its writes like any other.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { ValidatingAdmission, type ServiceResolver } from './admission.ts';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../../lib/clock.ts';
import { scaledClock } from '../clocks.ts';
import { EventExpiry } from './event-expiry.ts';
import { Faults, RequestLog } from './faults.ts';
import { FakeHttpServer } from './http-server.ts';
import { clone } from './json-values.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { metadataOf, stringField } from './object-meta.ts';
import { ObjectStore } from './object-store.ts';
import type { PatchType } from './patch.ts';
import { Registry } from './registry.ts';
import { BUILTIN_TYPES, TypeRegistry } from './resource-types.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../tls-fixture.ts';
import type { KubeObject, ResourceType, ResourceTypeDefinition } from './resource-types.ts';
import { WatchHub } from './watch-hub.ts';

export type { DropOptions, FailOptions, Faults, RecordedRequest, RequestFilter, RequestLog, ThrottleOptions, Verb } from './faults.ts';
export type { KubeObject, ResourceType, ResourceTypeDefinition } from './resource-types.ts';
export type { PatchType } from './patch.ts';
export type { ServiceResolver } from './admission.ts';
export { StatusError } from './status.ts';
export type { Status } from './status.ts';

export interface FakeApiServerOptions {
  /**
   * Answer 401 to requests without `Authorization: Bearer <token>`.
   * Default false: kubectl (client-go) sends credentials only over HTTPS,
   * so with plain HTTP only client-node can pass; combine with `tls`.
   */
  readonly requireToken?: boolean;
  /**
   * Serve HTTPS (a self-signed test certificate; the kubeconfig skips
   * verification) instead of plain HTTP. Default false.
   */
  readonly tls?: boolean;
  /** The bearer token in the kubeconfig. Default: random. */
  readonly token?: string;
  /**
   * How many times faster than real time the server's clock runs: watch
   * bookmarks (a minute apart) and timeouts, and Event expiry all follow it.
   * Default 1. A client talking to it runs on the same clock (`clock`):
   * client-node's 30 s watch idle abort, the informer's watchdog.
   */
  readonly timeScale?: number;
  /** The server's clock, instead of one `timeScale` times faster than real time (a virtual one, say). */
  readonly clock?: Clock;
  /** How long an Event lives after its last write, in server seconds: the API server's --event-ttl. Default 3600. */
  readonly eventTtlSeconds?: number;
  /** Changes kept per type for watch replay and consistent pages; older versions answer 410. Default 1000. */
  readonly historyLimit?: number;
  /** How a watch from a compacted version fails: 'event' (in-stream ERROR, what real servers do; default) or 'status' (HTTP 410). */
  readonly expiredWatchAs?: 'event' | 'status';
  /** Custom resource types served from the start. */
  readonly customResources?: readonly ResourceTypeDefinition[];
  /** The kubeconfig context's namespace. Default 'default'. */
  readonly contextNamespace?: string;
  /**
   * Where admission webhooks given as a Service (`clientConfig.service`)
   * listen: the real server dials the Service; here the test says. A
   * Service it does not know is a failure to call the webhook.
   */
  readonly webhookServices?: ServiceResolver;
}

/** Which object: apiVersion and kind pick the type; namespace for namespaced types. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

export interface FakeApiServer {
  /** `http://127.0.0.1:PORT` (https with the `tls` option). */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** `Bearer <token>`, for raw HTTP calls. */
  readonly authorization: string;
  /** A kubeconfig for this server (owner-only file, removed by close()). */
  readonly kubeconfigPath: string;
  /** Every request with its verb and the status it got. */
  readonly requests: RequestLog;
  readonly faults: Faults;
  /** The server's clock: give the clients that talk to it the same. */
  readonly clock: Clock;
  /** The current global resourceVersion. */
  readonly resourceVersion: number;
  /** Open watch streams, of one resource (plural or plural.group) when given. */
  openWatches(resource?: string): number;
  /** Serves a custom resource type from now on (what creating its CRD does). */
  registerCustomResource(definition: ResourceTypeDefinition): ResourceType;
  /** Forgets the change history: a watch or page from any version so far gets 410 Expired. */
  compactHistory(): void;
  /** Creates the object; its apiVersion and kind pick the type. Throws StatusError as the HTTP API would answer. */
  create(object: KubeObject): KubeObject;
  /** Replaces the object (409 when metadata.resourceVersion is set and stale). */
  update(object: KubeObject): KubeObject;
  /** Replaces the object's status through the status subresource. */
  updateStatus(object: KubeObject): KubeObject;
  /** Creates the object, or replaces it whatever its current resourceVersion. */
  upsert(object: KubeObject): KubeObject;
  /** Patches the object (merge patch by default). */
  patch(ref: ObjectRef, patch: unknown, type?: PatchType): KubeObject;
  /** Deletes the object (a Namespace with everything in it) and returns its last state; 404 StatusError when absent. */
  delete(ref: ObjectRef): KubeObject;
  get(ref: ObjectRef): KubeObject | undefined;
  /** Objects of a type sorted by namespace and name, in one namespace when given. */
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  /** Ends every watch and connection, stops the server and removes the kubeconfig. */
  close(): Promise<void>;
}

const INITIAL_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

function refOf(object: KubeObject): ObjectRef {
  const metadata = metadataOf(object);
  return {
    apiVersion: String(object['apiVersion'] ?? ''),
    kind: String(object['kind'] ?? ''),
    namespace: stringField(metadata, 'namespace'),
    name: stringField(metadata, 'name'),
  };
}

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const types = new TypeRegistry(BUILTIN_TYPES);
  for (const definition of options.customResources ?? []) types.registerCustom(definition);
  const store = new ObjectStore(options.historyLimit ?? 1000);
  const registry = new Registry(types, store);
  for (const name of INITIAL_NAMESPACES) registry.create(types.require('v1', 'Namespace'), undefined, { metadata: { name } });

  const clock = options.clock ?? scaledClock(options.timeScale ?? 1);
  const expiry = new EventExpiry(registry, (options.eventTtlSeconds ?? 3_600) * 1_000, clock);

  const hub = new WatchHub();
  const faults = new Faults(hub);
  const requests = new RequestLog();
  const token = options.token ?? randomBytes(24).toString('base64url');
  const server = new FakeHttpServer({
    registry,
    hub,
    faults,
    requests,
    token: options.requireToken === true ? token : undefined,
    watch: { clock, expiredAs: options.expiredWatchAs ?? 'event' },
    admission: new ValidatingAdmission(registry, options.webhookServices ?? (() => undefined)),
    ...(options.tls === true ? { tls: { cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY } } : {}),
  });
  const port = await server.listen();
  const url = `${options.tls === true ? 'https' : 'http'}://127.0.0.1:${port}`;
  const directory = await mkdtemp(join(tmpdir(), 'fake-apiserver-'));
  const kubeconfigPath = join(directory, 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, { server: url, token, namespace: options.contextNamespace ?? 'default' });

  const typeOf = (apiVersion: unknown, kind: unknown): ResourceType => types.require(String(apiVersion ?? ''), String(kind ?? ''));
  const namespaceOf = (type: ResourceType, ref: ObjectRef): string => {
    if (!type.namespaced) return '';
    if (ref.namespace === undefined || ref.namespace === '') throw new Error(`${type.kind} ${JSON.stringify(ref.name)} is namespaced: the reference needs a namespace`);
    return ref.namespace;
  };
  /** What the object would be on the wire: Dates as client-node serialises them, undefined fields gone. */
  const wire = (object: KubeObject): KubeObject => JSON.parse(JSON.stringify(object)) as KubeObject;

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    token,
    authorization: `Bearer ${token}`,
    kubeconfigPath,
    requests,
    faults,
    clock,
    get resourceVersion() {
      return store.resourceVersion;
    },
    openWatches: (resource) => hub.count(resource),
    registerCustomResource: (definition) => types.registerCustom(definition),
    compactHistory: () => store.compact(),
    create: (object) => registry.create(typeOf(object['apiVersion'], object['kind']), undefined, wire(object)),
    update: (object) => registry.update(typeOf(object['apiVersion'], object['kind']), undefined, undefined, wire(object)).object,
    updateStatus: (object) => registry.update(typeOf(object['apiVersion'], object['kind']), undefined, undefined, wire(object), { status: true }).object,
    upsert(object) {
      const ref = refOf(object);
      const type = typeOf(ref.apiVersion, ref.kind);
      if (store.get(type, type.namespaced ? (ref.namespace ?? '') : '', ref.name) === undefined) return registry.create(type, undefined, wire(object));
      const { resourceVersion: _ignored, ...metadata } = metadataOf(object);
      return registry.update(type, undefined, undefined, wire({ ...object, metadata })).object;
    },
    patch(ref, patch, patchType = 'merge') {
      const type = typeOf(ref.apiVersion, ref.kind);
      return registry.patch(type, namespaceOf(type, ref), ref.name, patchType, JSON.parse(JSON.stringify(patch)));
    },
    delete(ref) {
      const type = typeOf(ref.apiVersion, ref.kind);
      return registry.delete(type, namespaceOf(type, ref), ref.name);
    },
    get(ref) {
      const type = typeOf(ref.apiVersion, ref.kind);
      const object = store.get(type, namespaceOf(type, ref), ref.name);
      return object === undefined ? undefined : clone(object);
    },
    list: (apiVersion, kind, namespace) => store.list(typeOf(apiVersion, kind), namespace).map(clone),
    close() {
      closed ??= (async () => {
        faults.reset();
        expiry.close();
        await server.close();
        await rm(directory, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
