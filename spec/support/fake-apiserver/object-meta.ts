/**
 * ObjectMeta as the server owns it: validation of names, labels and
 * annotations (apimachinery's ValidateObjectMeta, in short), and the
 * system fields a write sets (uid, creationTimestamp, generation,
 * resourceVersion) while ignoring what the client sent for them.
 */
import { randomUUID } from 'node:crypto';
import { checkLabelKey, checkLabelValue, isDnsLabel, isDnsSubdomain } from '../../../lib/kube-syntax/label-selector.ts';
import type { KubeObject, NameRule, ResourceType } from './resource-types.ts';
import type { FieldError } from './status.ts';

export type Metadata = Record<string, unknown>;

/** The object's metadata, or an empty object when it has none or a non-object. */
export function metadataOf(object: KubeObject): Metadata {
  const metadata = object.metadata;
  return metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata : {};
}

export function stringField(metadata: Metadata, field: string): string {
  const value = metadata[field];
  return typeof value === 'string' ? value : '';
}

const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const NAME_RULES: Record<NameRule, { readonly test: (name: string) => boolean; readonly says: string }> = {
  'dns-subdomain': {
    test: isDnsSubdomain,
    says: "must be a lowercase RFC 1123 subdomain of at most 253 characters: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. 'example.com')",
  },
  'dns-label': {
    test: isDnsLabel,
    says: "must be a lowercase RFC 1123 label of at most 63 characters: lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. 'my-name')",
  },
  'dns-1035-label': {
    test: (name) => name.length <= 63 && dns1035Label.test(name),
    says: "must be a DNS-1035 label of at most 63 characters: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (e.g. 'my-name')",
  },
};

/** Annotations may take this many bytes in total, keys and values together. */
const ANNOTATIONS_LIMIT = 256 * 1024;

function stringMapErrors(value: unknown, field: string, checkKey: (key: string) => string | undefined, checkValue: ((value: string) => string | undefined) | undefined): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    return [{ field, type: 'FieldValueInvalid', value, detail: 'must be a map of strings' }];
  }
  const errors: FieldError[] = [];
  for (const [key, entry] of Object.entries(value)) {
    const keyProblem = checkKey(key);
    if (keyProblem !== undefined) errors.push({ field, type: 'FieldValueInvalid', value: key, detail: keyProblem });
    if (typeof entry !== 'string') {
      errors.push({ field: `${field}[${key}]`, type: 'FieldValueInvalid', value: entry, detail: 'must be a string' });
      continue;
    }
    const valueProblem = checkValue?.(entry);
    if (valueProblem !== undefined) errors.push({ field: `${field}[${key}]`, type: 'FieldValueInvalid', value: entry, detail: valueProblem });
  }
  return errors;
}

/** Name, namespace, labels and annotations of an object about to be stored. */
export function validateMetadata(type: ResourceType, object: KubeObject): FieldError[] {
  const metadata = metadataOf(object);
  const errors: FieldError[] = [];
  const name = stringField(metadata, 'name');
  if (name === '') {
    errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'name or generateName is required' });
  } else if (!NAME_RULES[type.nameRule].test(name)) {
    errors.push({ field: 'metadata.name', type: 'FieldValueInvalid', value: name, detail: NAME_RULES[type.nameRule].says });
  }
  errors.push(...stringMapErrors(metadata['labels'], 'metadata.labels', checkLabelKey, checkLabelValue));
  errors.push(...stringMapErrors(metadata['annotations'], 'metadata.annotations', (key) => checkLabelKey(key)?.replace('label key', 'annotation key'), undefined));
  const annotations = metadata['annotations'];
  if (annotations !== null && typeof annotations === 'object') {
    const size = Object.entries(annotations).reduce((total, [key, value]) => total + key.length + String(value).length, 0);
    if (size > ANNOTATIONS_LIMIT) {
      errors.push({ field: 'metadata.annotations', type: 'FieldValueTooLong', detail: `must have at most ${ANNOTATIONS_LIMIT} bytes` });
    }
  }
  return errors;
}

const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` plus five characters from the alphabet Kubernetes uses (no vowels, no look-alike digits). */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let index = 0; index < 5; index++) {
    suffix += GENERATED_NAME_ALPHABET[Math.floor(Math.random() * GENERATED_NAME_ALPHABET.length)];
  }
  return `${prefix}${suffix}`;
}

/** RFC 3339 in whole seconds, as metav1.Time serialises. */
function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Fields a client may not set: the server fills or drops them. */
const SYSTEM_FIELDS = ['uid', 'creationTimestamp', 'generation', 'resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'managedFields'];

/** Metadata of a new object: the client's fields without the system ones, then uid, creationTimestamp and generation. */
export function metadataForCreate(type: ResourceType, metadata: Metadata, namespace: string | undefined): Metadata {
  const result: Metadata = {};
  for (const [field, value] of Object.entries(metadata)) {
    if (!SYSTEM_FIELDS.includes(field) && field !== 'namespace') result[field] = value;
  }
  if (type.namespaced && namespace !== undefined) result['namespace'] = namespace;
  result['uid'] = randomUUID();
  result['creationTimestamp'] = timestamp();
  if (type.generation) result['generation'] = 1;
  return result;
}

/**
 * Metadata of an updated object: the client's changeable fields, the stored
 * system fields. `specChanged` says whether anything outside metadata and
 * status changed, which is what moves generation.
 */
export function metadataForUpdate(type: ResourceType, metadata: Metadata, stored: Metadata, specChanged: boolean): Metadata {
  const result: Metadata = {};
  for (const [field, value] of Object.entries(metadata)) {
    if (!SYSTEM_FIELDS.includes(field)) result[field] = value;
  }
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp']) {
    if (stored[field] === undefined) delete result[field];
    else result[field] = stored[field];
  }
  if (type.generation) {
    const generation = typeof stored['generation'] === 'number' ? stored['generation'] : 1;
    result['generation'] = specChanged ? generation + 1 : generation;
  }
  return result;
}
