import type { GuardedDirective } from './guarded-directives.ts';
import type { KubeObject } from '../pipeline/model.ts';
import type { PipelineSettings } from './pipeline-settings.ts';
import type { Template } from './template.ts';

/**
 * The controller configuration after loading: every field checked, every
 * duration in milliseconds, every JSONPath and template compiled. Loading
 * either yields this whole or a list of errors; nothing half-loaded runs.
 */
export interface ControllerConfig {
  readonly podSelector: { readonly matchLabels: Readonly<Record<string, string>> };
  readonly dataplane: DataplaneSettings;
  /** debounce, maxWait and the dataplane timings, as the pipeline takes them. */
  readonly pipeline: PipelineSettings;
  /** In the order the configuration lists them. */
  readonly watchedResources: readonly WatchedResource[];
  /** Paths dropped from every object before it is stored. */
  readonly ignoreFields: readonly CompiledPath[];
  readonly ingress: {
    readonly className: string;
    /**
     * Namespaces whose Ingresses may share a host with one another (`['*']`:
     * every namespace). By default a host, its routes and its certificates
     * belong to the namespace of the oldest Ingress claiming it.
     */
    readonly sharedHostNamespaces: readonly string[];
  };
  readonly gatewayApi: {
    /** spec.controllerName of the GatewayClasses this controller serves and writes status to. */
    readonly controllerName: string;
    /**
     * The Gateway listener ports served by the shipped frontend's HTTP and
     * HTTPS binds: the ports clients reach HAProxy on (its Service's).
     * A listener on another port is not accepted (PortUnavailable).
     */
    readonly httpPort: number;
    readonly httpsPort: number;
  };
  readonly templates: Templates;
  readonly templateValues: Readonly<Record<string, unknown>>;
  readonly validationTests: readonly ValidationTest[];
  /** Guarded directives (see guarded-directives.ts) this configuration may use. */
  readonly allowDirectives: readonly GuardedDirective[];
}

export interface DataplaneSettings {
  readonly port: number;
  readonly scheme: 'http' | 'https';
  /** The base directory HAProxy and the Data Plane API use; relative paths in the config resolve against it. */
  readonly baseDir: string;
  /** Storage directories, relative to baseDir. */
  readonly mapsDir: string;
  readonly certificatesDir: string;
  readonly generalDir: string;
  readonly configFile: string;
}

/** A JSONPath-like key (`metadata.labels['app.kubernetes.io/name']`, `spec.ports[0].name`), compiled. */
export interface CompiledPath {
  readonly source: string;
  /** The path's segments: property names and array indexes. */
  readonly segments: readonly (string | number)[];
  /** The value at the path, as a string for scalars; undefined when absent or not a scalar. */
  readonly get: (object: unknown) => string | undefined;
}

export interface FieldSelector {
  readonly path: CompiledPath;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export interface WatchedResource {
  /** The key under `watchedResources`; templates reach the store as `resources.<name>`. */
  readonly name: string;
  readonly apiVersion: string;
  /** Kind, when given; the loader derives it from `resource` otherwise when it can. */
  readonly kind: string | undefined;
  /** Plural resource name (`ingresses`), given or derived from kind. */
  readonly resource: string;
  readonly namespace: string | undefined;
  /** Passed to the API server as is (checked for syntax at load). */
  readonly labelSelector: string | undefined;
  /** Applied client-side: every requirement must hold. */
  readonly fieldSelector: readonly FieldSelector[];
  readonly indexBy: readonly CompiledPath[];
  /** Cross-resource lookups resolved lazily through the target's index. */
  readonly relations: readonly Relation[];
  /** The admission webhook judges creations and updates of this resource's objects. */
  readonly validationWebhook: boolean;
  /**
   * Watched only when the API server serves it (a custom resource whose
   * CRD may not be installed): otherwise its store stays empty, and the
   * controller says so once instead of failing the watch again and again.
   */
  readonly optional?: boolean;
  /**
   * Older versions of the same group an optional resource may be served
   * at instead, in order: a cluster watches the first version the API
   * server serves (`apiVersion` first); manifests are read at any of them.
   */
  readonly fallbackApiVersions?: readonly string[];
}

/**
 * `resources.<from>` objects get a property `name` listing the objects of
 * `resource` whose index keys equal `keys` evaluated on the source object.
 */
export interface Relation {
  readonly name: string;
  readonly resource: string;
  readonly keys: readonly CompiledPath[];
}

export interface Templates {
  readonly haproxyConfig: Template;
  readonly partials: ReadonlyMap<string, Template>;
  readonly maps: ReadonlyMap<string, Template>;
  readonly files: ReadonlyMap<string, Template>;
  readonly certificates: ReadonlyMap<string, Template>;
}

export type Assertion =
  | { readonly type: 'haproxy_valid' }
  | { readonly type: 'deterministic' }
  | { readonly type: 'contains' | 'not_contains'; readonly target: string; readonly pattern: RegExp }
  | { readonly type: 'equals'; readonly target: string; readonly expected: string }
  | { readonly type: 'match_count'; readonly target: string; readonly pattern: RegExp; readonly count: number };

export interface ValidationTest {
  readonly name: string;
  readonly description: string | undefined;
  /** Objects by watched resource name. */
  readonly fixtures: ReadonlyMap<string, readonly KubeObject[]>;
  readonly assertions: readonly Assertion[];
}

/** The result of loading a configuration: all of it, or every problem found. */
export type ConfigLoad<Config> = { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly errors: readonly string[] };
