/**
 * The values that flow between pipeline stages. Every value is a whole
 * snapshot (never a diff), so any stage may drop an intermediate value and
 * the next one still carries everything needed downstream.
 */

export type ChangeType = 'added' | 'modified' | 'deleted';

/** One Kubernetes object change, kept so a reconciliation can name (and trace) what caused it. */
export interface ChangeRef {
  readonly kind: string;
  readonly type: ChangeType;
  readonly namespace: string | undefined;
  readonly name: string;
  /** Scheduler time the change was seen; the start of change-to-deploy latency. */
  readonly at: number;
}

/**
 * The changes folded into one reconciliation. `refs` is capped (a trace span
 * can only carry so many links); `count` and `firstAt` stay exact.
 */
export interface Changes {
  readonly count: number;
  readonly firstAt: number;
  readonly refs: readonly ChangeRef[];
}

/** Read side of one watched type's store, as templates and renderers see it. */
export interface StoreReader<T = KubeObject> {
  readonly size: number;
  /** Grows with every change, so a consumer can tell that nothing changed since it last looked. */
  readonly version: number;
  /**
   * The objects changed since `version` (each both as it was and as it is
   * now), or undefined when that is too far back to tell: then everything
   * must be looked at again.
   */
  changesSince?(version: number): readonly KubeObject[] | undefined;
  list(): readonly T[];
  get(namespace: string | undefined, name: string): T | undefined;
  /** Objects whose index keys start with `keys` (an index lookup, not a scan). */
  lookup(...keys: string[]): readonly T[];
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly uid?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly [key: string]: unknown;
  };
  readonly [key: string]: unknown;
}

/**
 * The state of every watched store at one revision. The stores are read
 * live: rendering reads them synchronously when it starts, which is the
 * newest state, so a dropped snapshot loses nothing.
 */
export interface Snapshot {
  readonly revision: number;
  readonly stores: ReadonlyMap<string, StoreReader>;
  /** The HAProxy instances of the fleet that share counters, by name; absent or empty when none do. */
  readonly peers?: readonly Peer[];
  /** The change that produced this revision; absent for the initial-sync snapshot. */
  readonly change: ChangeRef | undefined;
}

/** A debounced snapshot together with every change folded into it. */
export interface Trigger {
  readonly snapshot: Snapshot;
  readonly changes: Changes;
}

/** What a render produces: the main configuration plus the auxiliary files it refers to. */
export interface RenderedFiles {
  readonly config: string;
  readonly maps: Readonly<Record<string, string>>;
  readonly certificates: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, string>>;
}

/** The object a value on a rendered line came from, and the field that held it. */
export interface ValueSource {
  /** "Kind namespace/name". */
  readonly label: string;
  /** The field path inside the object, e.g. `spec.rules[0].host`. */
  readonly field: string;
  /** The object as stored when it was rendered: a changed object is another one. */
  readonly object: KubeObject;
}

/** Where one rendered line comes from: the template line, and the objects whose values are on it. */
export interface LineOrigin {
  readonly template: string;
  readonly line: number;
  /** "Kind namespace/name" of each object a value on the line came from. */
  readonly objects: readonly string[];
  /** The same objects, each with the first field of it the line shows. */
  readonly sources: readonly ValueSource[];
}

/** Origins per rendered file, by target name (`haproxy.cfg`, `maps/host.map`...), one entry per line. */
export type RenderOrigins = ReadonlyMap<string, readonly LineOrigin[]>;

/** Everything a render produces. */
export interface RenderOutput {
  readonly files: RenderedFiles;
  /** Objects (or parts of them) left out, each with the field at fault. */
  readonly excluded: readonly Problem[];
  /** Served, but not as the object asks (a missing Service, a route conflict...). */
  readonly warnings: readonly Problem[];
  readonly origins: RenderOrigins;
  /** Template lines that read a name about to go (lib/render/deprecated-names.ts): each template's first, in the first render to find it. */
  readonly deprecations?: readonly string[];
  /**
   * What each view's translation made of the objects the render was given,
   * by view name (lib/render/views.ts ProvidedView.outcome): the status side
   * streams read the routing view's (lib/routing-view/routing-outcome.ts
   * RoutingOutcome) instead of translating again. The pipeline only hands
   * it over (streams/pipeline.ts), so its type is not named here.
   */
  readonly outcomes?: Readonly<Record<string, object>>;
}

export interface Rendered extends RenderOutput {
  readonly revision: number;
  /** What it was rendered from: a configuration HAProxy refuses is rendered again from it without the objects at fault. */
  readonly snapshot: Snapshot;
  /** Content hash of `files`: equal hashes mean identical deployments. */
  readonly hash: string;
  readonly changes: Changes;
}

/**
 * A rendered configuration that passed validation; the only thing ever
 * deployed. Runtime-first (docs/adr/0022-runtime-first.md) passes one on
 * before its verdict (`pending`: the runtime may apply it, its files wait),
 * and the same one again once valid (`confirmed`, with no changes of its
 * own: what is left is writing its files).
 */
export interface Validated extends Rendered {
  readonly runtimeFirst?: 'pending' | 'confirmed';
}

/** A place in a rendered file: its target name (`haproxy.cfg`, `general/crt-list.txt`) and 1-based line. */
export interface AlertLocation {
  readonly file: string;
  readonly line: number;
}

/** One of HAProxy's ALERT lines about a configuration, with the places it names. */
export interface ConfigAlert {
  /** HAProxy's message without its prefix, paths shown relative to the configuration's base. */
  readonly message: string;
  /** What it says of the innermost place it names (the whole message when it names none). */
  readonly detail: string;
  /** The places it names, outermost first: a bind line names its crt-list, which names its own line. */
  readonly locations: readonly AlertLocation[];
  /** Rendered files it names in quotes (`'ssl/shop.pem'`), by target name. */
  readonly files: readonly string[];
  /** Proxies it names (`Proxy 'http'`, `backend 'web'`). */
  readonly sections: readonly string[];
}

/**
 * What validation found. `invalid` is HAProxy's (or the directive guard's)
 * judgement of the configuration; `unavailable` means no judgement was made
 * (no space for the files, no process to run, HAProxy killed): the
 * configuration may be fine, and is checked again later.
 */
export type ValidationVerdict =
  | { readonly status: 'valid' }
  | { readonly status: 'invalid'; readonly message: string; readonly alerts: readonly ConfigAlert[] }
  | { readonly status: 'unavailable'; readonly message: string };

export interface Endpoint {
  /** Stable identity (for example the pod's namespace/name). */
  readonly id: string;
  readonly url: string;
  /** How the other HAProxy instances of the fleet reach this one to share counters; undefined for a HAProxy alone. */
  readonly peer?: Peer;
}

/**
 * A HAProxy of the fleet in the `peers` section: its local peer name (what
 * HAProxy calls itself: its hostname unless started with `-L`, so a pod's
 * name) and the address its peer port listens on.
 */
export interface Peer {
  readonly name: string;
  readonly address: string;
}

/** `confirmed`: a runtime-first configuration deployed again once valid, to write its files. */
export type DeployReason = 'change' | 'discovered' | 'drift' | 'confirmed';

export interface DeployRequest {
  readonly endpoint: Endpoint;
  readonly config: Validated;
  readonly reason: DeployReason;
}

/** `persisted`: what runs was already the configuration; its files, which lagged, were written. */
export type DeployMode = 'runtime' | 'reload' | 'unchanged' | 'persisted';

/** What one endpoint's convergence reports after applying a configuration. */
export interface DeployResult {
  readonly mode: DeployMode;
  /** Why a reload was needed, when mode is 'reload'. */
  readonly reloadReason?: string;
  readonly reloadId?: string;
  readonly operations: number;
}

/**
 * What an informer-like source emits for one watched type: object events,
 * and `synced` once its initial list has been delivered.
 */
export type ResourceEvent = { readonly type: ChangeType; readonly kind: string; readonly object: KubeObject } | { readonly type: 'synced'; readonly kind: string };

/** How one watched type is stored: its name in the store map and its index key extractors. */
export interface WatchedType {
  readonly kind: string;
  /** Composite index: each extractor yields one key part; lookups match a prefix of the parts. */
  readonly indexBy: readonly ((object: KubeObject) => string | undefined)[];
  /** The controller writes these objects' status: an update that changes only the status is stored without a render. */
  readonly ownStatus?: boolean;
}

/** What the fleet stages consume: the newest validated config, or the whole current endpoint set. */
export type FleetInput = { readonly type: 'config'; readonly config: Validated } | { readonly type: 'endpoints'; readonly endpoints: readonly Endpoint[] };

/** Per-endpoint work: deploy a config there, or forget the endpoint (its stream completes). */
export type FleetCommand = { readonly type: 'deploy'; readonly request: DeployRequest } | { readonly type: 'remove'; readonly endpointId: string };

/** Something left out of, or degraded in, a rendered configuration, named so a user can find it. */
export interface Problem {
  /** "Kind namespace/name". */
  readonly object: string;
  /** The field at fault, e.g. `spec.rules[0].host`. */
  readonly field: string;
  readonly message: string;
}
