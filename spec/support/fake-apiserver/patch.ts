/**
 * The PATCH bodies the API server takes, by Content-Type:
 *
 * - application/json-patch+json: RFC 6902 (client-node's default for its
 *   patch methods), all six operations;
 * - application/merge-patch+json: RFC 7386;
 * - application/strategic-merge-patch+json: without the Go types' patch
 *   metadata, so an approximation. Maps merge as in a merge patch; `$patch:
 *   delete|replace` and `$retainKeys` are honoured; a list is merged by key
 *   only when the patch names its order with `$setElementOrder/<field>`
 *   (kubectl apply always does for the lists it merges), the key being the
 *   one field of those order entries, with `{$patch: delete, <key>: ...}`
 *   entries removing elements; a primitive list with `$setElementOrder` or
 *   `$deleteFromPrimitiveList` is merged as a set. Any other list is
 *   replaced, as merge patch does; the real server would merge lists whose
 *   Go field declares a merge strategy even without these directives.
 *
 * Server-side apply (application/apply-patch+yaml) is not implemented.
 */
import { clone, isJsonObject, jsonEqual } from './json-values.ts';
import type { JsonObject } from './json-values.ts';

export type PatchType = 'json' | 'merge' | 'strategic';

export const PATCH_MEDIA_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

/** A patch document that is malformed (400) or does not apply to the object (422). */
export class PatchError extends Error {
  readonly malformed: boolean;

  constructor(message: string, malformed: boolean) {
    super(message);
    this.name = 'PatchError';
    this.malformed = malformed;
  }
}

export function applyPatch(target: JsonObject, type: PatchType, patch: unknown): JsonObject {
  switch (type) {
    case 'merge':
      if (!isJsonObject(patch)) throw new PatchError('a merge patch must be a JSON object', true);
      return mergePatch(target, patch) as JsonObject;
    case 'strategic':
      if (!isJsonObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object', true);
      return (strategicMerge(target, patch) ?? {}) as JsonObject;
    case 'json':
      return jsonPatch(target, patch);
  }
}

// --- RFC 7386 ---------------------------------------------------------------

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return clone(patch);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// --- strategic merge patch ----------------------------------------------------

const ORDER_PREFIX = '$setElementOrder/';
const DELETE_PREFIX = '$deleteFromPrimitiveList/';

/** The merged value; undefined when the patch deletes it (`$patch: delete`). */
function strategicMerge(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return clone(patch);
  const directive = patch['$patch'];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return withoutDirectives(patch);
  if (directive !== undefined) throw new PatchError(`unknown $patch directive ${JSON.stringify(directive)}`, true);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  const listFields = new Set<string>();
  for (const key of Object.keys(patch)) {
    if (key.startsWith(ORDER_PREFIX)) listFields.add(key.slice(ORDER_PREFIX.length));
    else if (key.startsWith(DELETE_PREFIX)) listFields.add(key.slice(DELETE_PREFIX.length));
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      listFields.delete(key);
      result[key] = mergeList(result[key], value, patch[ORDER_PREFIX + key], patch[DELETE_PREFIX + key]);
    } else {
      const merged = strategicMerge(result[key], value);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    }
  }
  // Directives without their list: only the order changed or elements were removed.
  for (const field of listFields) {
    result[field] = mergeList(result[field], [], patch[ORDER_PREFIX + field], patch[DELETE_PREFIX + field]);
  }
  const retain = patch['$retainKeys'];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchError('$retainKeys must be a list of field names', true);
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

function withoutDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => !(isJsonObject(item) && item['$patch'] !== undefined)).map(withoutDirectives);
  if (!isJsonObject(value)) return clone(value);
  const result: JsonObject = {};
  for (const [key, item] of Object.entries(value)) if (!key.startsWith('$')) result[key] = withoutDirectives(item);
  return result;
}

/**
 * The merge key of a list of objects: the one field of its
 * `$setElementOrder` entries, or, when the order is empty (every element
 * deleted), the one field beside `$patch` of the delete entries. Undefined
 * for a list of primitives.
 */
function mergeKeyOf(order: readonly unknown[], patch: readonly unknown[]): string | undefined {
  const entries = order.length > 0 ? order : patch.filter((item) => isJsonObject(item) && item['$patch'] === 'delete');
  if (entries.length === 0 || !isJsonObject(entries[0])) return undefined;
  const fieldsOf = (entry: unknown): string[] => (isJsonObject(entry) ? Object.keys(entry).filter((field) => field !== '$patch') : []);
  const [key, ...others] = fieldsOf(entries[0]);
  if (key === undefined || others.length > 0 || !entries.every((entry) => fieldsOf(entry).length === 1 && fieldsOf(entry)[0] === key)) {
    throw new PatchError('each $setElementOrder entry must name exactly one merge key field', true);
  }
  return key;
}

function mergeList(current: unknown, patch: readonly unknown[], order: unknown, deletions: unknown): unknown[] {
  if (order !== undefined && !Array.isArray(order)) throw new PatchError('$setElementOrder must be a list', true);
  if (deletions !== undefined && !Array.isArray(deletions)) throw new PatchError('$deleteFromPrimitiveList must be a list', true);
  const existing = Array.isArray(current) ? current : [];
  if (patch.some((item) => isJsonObject(item) && item['$patch'] === 'replace')) return withoutDirectives(patch) as unknown[];
  if (order === undefined && deletions === undefined) return withoutDirectives(patch) as unknown[];
  const mergeKey = mergeKeyOf(order ?? [], patch);
  if (mergeKey === undefined) return mergePrimitiveList(existing, patch, order ?? [], deletions ?? []);
  const merged = existing.map(clone);
  for (const item of patch) {
    if (!isJsonObject(item)) throw new PatchError(`list entries merged by ${mergeKey} must be objects`, true);
    const at = merged.findIndex((entry) => isJsonObject(entry) && jsonEqual(entry[mergeKey], item[mergeKey]));
    if (item['$patch'] === 'delete') {
      if (at >= 0) merged.splice(at, 1);
    } else if (at >= 0) {
      merged[at] = strategicMerge(merged[at], item);
    } else {
      merged.push(strategicMerge(undefined, item));
    }
  }
  return sortByOrder(
    merged,
    order as readonly JsonObject[],
    (entry) => (isJsonObject(entry) ? entry[mergeKey] : undefined),
    (entry) => entry[mergeKey],
  );
}

function mergePrimitiveList(existing: readonly unknown[], patch: readonly unknown[], order: readonly unknown[], deletions: readonly unknown[]): unknown[] {
  const merged = existing.filter((item) => !deletions.some((removed) => jsonEqual(removed, item)));
  for (const item of patch) if (!merged.some((entry) => jsonEqual(entry, item))) merged.push(clone(item));
  return sortByOrder(
    merged,
    order,
    (entry) => entry,
    (entry) => entry,
  );
}

/** Entries named by `order` first, in its order; the others after them, in their current order. */
function sortByOrder<T>(entries: unknown[], order: readonly T[], keyOfEntry: (entry: unknown) => unknown, keyOfOrder: (entry: T) => unknown): unknown[] {
  const rank = (entry: unknown): number => {
    const at = order.findIndex((wanted) => jsonEqual(keyOfOrder(wanted), keyOfEntry(entry)));
    return at < 0 ? order.length : at;
  };
  return entries
    .map((entry, index) => ({ entry, index, rank: rank(entry) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ entry }) => entry);
}

// --- RFC 6902 -------------------------------------------------------------------

interface Operation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
  readonly hasValue: boolean;
}

function readOperation(raw: unknown, index: number): Operation {
  if (!isJsonObject(raw)) throw new PatchError(`JSON patch operation ${index} is not an object`, true);
  const { op, path, from } = raw;
  if (typeof op !== 'string') throw new PatchError(`JSON patch operation ${index} has no "op"`, true);
  if (typeof path !== 'string') throw new PatchError(`JSON patch operation ${index} (${op}) has no "path"`, true);
  if (from !== undefined && typeof from !== 'string') throw new PatchError(`JSON patch operation ${index} (${op}) has a non-string "from"`, true);
  return { op, path, ...(from === undefined ? {} : { from }), value: raw['value'], hasValue: 'value' in raw };
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`JSON pointer ${JSON.stringify(path)} must start with "/"`, true);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(token: string, length: number, allowEnd: boolean, path: string): number {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new PatchError(`${path}: ${JSON.stringify(token)} is not an array index`, false);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) throw new PatchError(`${path}: index ${index} is out of range`, false);
  return index;
}

/** The container of the path's last token, and that token. */
function parentOf(document: unknown, tokens: readonly string[], path: string): { container: unknown; last: string } {
  let container = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(container)) container = container[arrayIndex(token, container.length, false, path)];
    else if (isJsonObject(container) && token in container) container = container[token];
    else throw new PatchError(`${path}: the path does not exist`, false);
  }
  return { container, last: tokens.at(-1)! };
}

function read(document: unknown, path: string): unknown {
  let value = document;
  for (const token of pointer(path)) {
    if (Array.isArray(value)) value = value[arrayIndex(token, value.length, false, path)];
    else if (isJsonObject(value) && token in value) value = value[token];
    else throw new PatchError(`${path}: the path does not exist`, false);
  }
  return value;
}

function add(document: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return clone(value);
  const { container, last } = parentOf(document, tokens, path);
  if (Array.isArray(container)) container.splice(arrayIndex(last, container.length, true, path), 0, clone(value));
  else if (isJsonObject(container)) container[last] = clone(value);
  else throw new PatchError(`${path}: the parent is not an object or array`, false);
  return document;
}

function remove(document: unknown, path: string): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) throw new PatchError('cannot remove the whole document', false);
  const { container, last } = parentOf(document, tokens, path);
  if (Array.isArray(container)) container.splice(arrayIndex(last, container.length, false, path), 1);
  else if (isJsonObject(container) && last in container) delete container[last];
  else throw new PatchError(`${path}: the path does not exist`, false);
  return document;
}

function jsonPatch(target: JsonObject, patch: unknown): JsonObject {
  if (!Array.isArray(patch)) throw new PatchError('a JSON patch must be a list of operations', true);
  let document: unknown = clone(target);
  patch.forEach((raw, index) => {
    const operation = readOperation(raw, index);
    const needsValue = (): unknown => {
      if (!operation.hasValue) throw new PatchError(`JSON patch operation ${index} (${operation.op}) has no "value"`, true);
      return operation.value;
    };
    const from = (): string => {
      if (operation.from === undefined) throw new PatchError(`JSON patch operation ${index} (${operation.op}) has no "from"`, true);
      return operation.from;
    };
    switch (operation.op) {
      case 'add':
        document = add(document, operation.path, needsValue());
        break;
      case 'remove':
        document = remove(document, operation.path);
        break;
      case 'replace': {
        const value = needsValue();
        read(document, operation.path);
        document = operation.path === '' ? clone(value) : add(remove(document, operation.path), operation.path, value);
        break;
      }
      case 'move': {
        const source = from();
        if (operation.path.startsWith(`${source}/`)) throw new PatchError(`${source}: cannot move a value into itself`, false);
        const value = read(document, source);
        document = add(remove(document, source), operation.path, value);
        break;
      }
      case 'copy':
        document = add(document, operation.path, read(document, from()));
        break;
      case 'test':
        if (!jsonEqual(read(document, operation.path), needsValue())) {
          throw new PatchError(`test operation at ${operation.path} failed: the value differs`, false);
        }
        break;
      default:
        throw new PatchError(`JSON patch operation ${index} has unknown op ${JSON.stringify(operation.op)}`, true);
    }
  });
  if (!isJsonObject(document)) throw new PatchError('the patched document is not an object', false);
  return document;
}
