/**
 * The resource types the fake serves, described the way the real server's
 * registry knows them: where they live (group, version, plural, scope) and
 * the per-type strategy choices that clients can observe (status
 * subresource, generation, what DELETE answers, create on PUT, field
 * selectors, name rules, validation).
 */
import { endpointSliceDefaults, namespaceDefaults, secretDefaults, serviceDefaults } from './builtin-defaults.ts';
import { validateEventsV1, validateEventsV1Update, validateIngress, validateLease } from './builtin-validation.ts';
import type { FieldError } from './status.ts';

export type KubeObject = Record<string, unknown> & { metadata?: Record<string, unknown> };

/** Which name format the type's validation demands (apimachinery's NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label). */
export type NameRule = 'dns-subdomain' | 'dns-label' | 'dns-1035-label';

export interface ResourceTypeDefinition {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Serves `/status`; writes to the main resource then keep the stored status, status writes change only status. */
  readonly statusSubresource?: boolean;
  /** Default: the kind in lower case. */
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  /**
   * metadata.generation is 1 on create and grows when anything outside
   * metadata and status changes. Default: true for custom resources, false otherwise.
   */
  readonly generation?: boolean;
  /** PUT to a missing object creates it (core v1 Events do). Default false. */
  readonly allowCreateOnUpdate?: boolean;
  /** DELETE answers with the deleted object (Pods, Services) instead of a Status. Default false. */
  readonly returnDeletedObject?: boolean;
  /** Default 'dns-subdomain'. */
  readonly nameRule?: NameRule;
  /** Field selector keys besides metadata.name and metadata.namespace (a CRD's selectableFields). */
  readonly selectableFields?: readonly string[];
  /**
   * Dotted paths of metav1.MicroTime fields. The real server decodes them
   * with exactly six fractional digits and answers 400 to anything else
   * (JavaScript's `toISOString()` has three).
   */
  readonly microTimeFields?: readonly string[];
  /**
   * For one version of a CRD served at several: the version its objects are
   * stored at (the CRD's `storage: true` one). Every version sharing a
   * storage version reads and writes the same objects, each seeing them
   * with its own apiVersion, as the None conversion strategy converts them
   * (apiextensions-apiserver pkg/apiserver/conversion/nop_converter.go sets
   * apiVersion and nothing else). Default: the type's own version.
   */
  readonly storageVersion?: string;
  /** Type-specific validation on create (`old` undefined) and update. */
  readonly validate?: (object: KubeObject, old: KubeObject | undefined) => FieldError[];
  /** Server-side defaults, applied to every object written (after status is reset on create); `old` is the stored object on update. */
  readonly applyDefaults?: (object: KubeObject, old: KubeObject | undefined) => void;
}

export interface ResourceType extends ResourceTypeDefinition {
  /** `v1` or `group/version`. */
  readonly apiVersion: string;
  readonly listKind: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly statusSubresource: boolean;
  readonly generation: boolean;
  readonly allowCreateOnUpdate: boolean;
  readonly returnDeletedObject: boolean;
  readonly nameRule: NameRule;
  readonly selectableFields: readonly string[];
  readonly microTimeFields: readonly string[];
  /**
   * Served from a CustomResourceDefinition: LIST items carry kind and
   * apiVersion (built-in types' items do not, as on a real server), and
   * status is dropped on create.
   */
  readonly custom: boolean;
  /** `group/version/plural`, unique per type. */
  readonly key: string;
  /** `group/storageVersion/plural`: types with one storage key share their objects. */
  readonly storageKey: string;
}

const plainName = /^[a-z][a-z0-9]*$/;
const groupName = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const kindName = /^[A-Z][A-Za-z0-9]*$/;

function checkDefinition(definition: ResourceTypeDefinition): void {
  const where = `resource type ${JSON.stringify(definition.plural)} (${definition.group || 'core'}/${definition.version})`;
  if (definition.group !== '' && !groupName.test(definition.group)) throw new Error(`${where}: group must be a DNS subdomain`);
  if (!plainName.test(definition.version)) throw new Error(`${where}: version must be lowercase letters and digits, like v1 or v1beta1`);
  if (!plainName.test(definition.plural)) throw new Error(`${where}: plural must be lowercase letters and digits`);
  if (!kindName.test(definition.kind)) throw new Error(`${where}: kind must be CamelCase, like Widget`);
  if (definition.singular !== undefined && !plainName.test(definition.singular)) {
    throw new Error(`${where}: singular must be lowercase letters and digits`);
  }
}

function resourceType(definition: ResourceTypeDefinition, custom: boolean): ResourceType {
  checkDefinition(definition);
  return {
    ...definition,
    apiVersion: definition.group === '' ? definition.version : `${definition.group}/${definition.version}`,
    listKind: `${definition.kind}List`,
    singular: definition.singular ?? definition.kind.toLowerCase(),
    shortNames: definition.shortNames ?? [],
    statusSubresource: definition.statusSubresource ?? false,
    generation: definition.generation ?? custom,
    allowCreateOnUpdate: definition.allowCreateOnUpdate ?? false,
    returnDeletedObject: definition.returnDeletedObject ?? false,
    nameRule: definition.nameRule ?? 'dns-subdomain',
    selectableFields: definition.selectableFields ?? [],
    microTimeFields: definition.microTimeFields ?? [],
    custom,
    key: `${definition.group}/${definition.version}/${definition.plural}`,
    storageKey: `${definition.group}/${definition.storageVersion ?? definition.version}/${definition.plural}`,
  };
}

const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

const EVENT_MICRO_TIMES = ['eventTime', 'series.lastObservedTime'];

/** What the controller and kubectl need, with each type's strategy as Kubernetes 1.35 has it. */
export const BUILTIN_TYPES: readonly ResourceTypeDefinition[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    statusSubresource: true,
    shortNames: ['ns'],
    nameRule: 'dns-label',
    selectableFields: ['status.phase'],
    applyDefaults: namespaceDefaults,
  },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, selectableFields: ['type'], applyDefaults: secretDefaults },
  {
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    statusSubresource: true,
    shortNames: ['svc'],
    returnDeletedObject: true,
    nameRule: 'dns-1035-label',
    selectableFields: ['spec.clusterIP', 'spec.type'],
    applyDefaults: serviceDefaults,
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    statusSubresource: true,
    shortNames: ['po'],
    generation: true,
    returnDeletedObject: true,
    selectableFields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    allowCreateOnUpdate: true,
    selectableFields: EVENT_FIELDS,
    microTimeFields: EVENT_MICRO_TIMES,
  },
  { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true, generation: true, applyDefaults: endpointSliceDefaults },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    statusSubresource: true,
    shortNames: ['ing'],
    generation: true,
    validate: validateIngress,
  },
  { group: 'networking.k8s.io', version: 'v1', kind: 'IngressClass', plural: 'ingressclasses', namespaced: false, generation: true },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
    generation: true,
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    microTimeFields: ['spec.acquireTime', 'spec.renewTime'],
    validate: validateLease,
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    allowCreateOnUpdate: true,
    microTimeFields: EVENT_MICRO_TIMES,
    validate: (object, old) => (old === undefined ? validateEventsV1(object) : validateEventsV1Update(object, old)),
  },
];

/** The types one server serves, looked up by path or by apiVersion and kind. */
export class TypeRegistry {
  readonly #byKey = new Map<string, ResourceType>();

  constructor(definitions: readonly ResourceTypeDefinition[]) {
    for (const definition of definitions) this.#add(resourceType(definition, false));
  }

  /** A custom resource type (what applying its CRD would serve). Throws when the group, version and plural are taken. */
  registerCustom(definition: ResourceTypeDefinition): ResourceType {
    const type = resourceType(definition, true);
    this.#add(type);
    return type;
  }

  #add(type: ResourceType): void {
    if (this.#byKey.has(type.key)) throw new Error(`resource type ${type.key} is already registered`);
    const sameKind = this.all().find((other) => other.apiVersion === type.apiVersion && other.kind === type.kind);
    if (sameKind !== undefined) throw new Error(`kind ${type.kind} in ${type.apiVersion} is already served as ${sameKind.plural}`);
    this.#byKey.set(type.key, type);
  }

  byPath(group: string, version: string, plural: string): ResourceType | undefined {
    return this.#byKey.get(`${group}/${version}/${plural}`);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.all().find((type) => type.apiVersion === apiVersion && type.kind === kind);
  }

  /** The type for apiVersion and kind; throws an Error naming both when none is served. */
  require(apiVersion: string, kind: string): ResourceType {
    const type = this.byKind(apiVersion, kind);
    if (type === undefined) throw new Error(`the fake API server serves no kind ${JSON.stringify(kind)} in ${JSON.stringify(apiVersion)}`);
    return type;
  }

  all(): ResourceType[] {
    return [...this.#byKey.values()];
  }

  /** Group versions in registration order, the core `v1` first. */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const type of this.all()) seen.set(type.apiVersion, { group: type.group, version: type.version });
    return [...seen.values()];
  }
}
