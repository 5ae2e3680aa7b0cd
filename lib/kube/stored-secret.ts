import type { KubeObject } from '../pipeline/model.ts';

/**
 * A Secret from a manifest as the API server would store it, so local mode
 * takes what `kubectl apply` takes:
 * - `stringData` is merged into `data`, base64-encoded, its keys winning, and
 *   dropped ("merged into the data field on write, overwriting any existing
 *   values ... never output when reading", Secret's API reference, k8s.io/api
 *   core/v1 types.go).
 * - `data` values are decoded as Go's encoding/json decodes []byte, with
 *   base64.StdEncoding, which ignores '\r' and '\n' (encoding/base64
 *   base64.go, Decode) and wants padding: so base64 wrapped as `base64`
 *   prints it is taken, and stored canonical.
 * - Keys are what the API server validates (IsConfigMapKey,
 *   k8s.io/apimachinery validation.go): letters, digits, '-', '_', '.'.
 * - A Secret without `type` is Opaque (SetDefaults_Secret, kubernetes
 *   pkg/apis/core/v1/defaults.go), so a watch selecting type=Opaque finds it.
 * Values never appear in a message.
 */

export type StoredSecret = { readonly ok: true; readonly object: KubeObject } | { readonly ok: false; readonly error: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEY = /^[-._a-zA-Z0-9]+$/;

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function validKey(key: string): boolean {
  return key.length <= 253 && KEY.test(key) && key !== '.' && key !== '..';
}

export function storedSecret(object: KubeObject): StoredSecret {
  const { namespace, name } = object.metadata;
  const refuse = (problem: string): StoredSecret => ({ ok: false, error: `Secret ${namespace === undefined ? '' : `${namespace}/`}${name}: ${problem}` });
  const data = object['data'] ?? {};
  const stringData = object['stringData'] ?? {};
  if (!isMapping(data)) return refuse('data is not a mapping');
  if (!isMapping(stringData)) return refuse('stringData is not a mapping');
  const untyped = object['type'] === undefined || object['type'] === null || object['type'] === '';
  let changed = untyped || object['stringData'] !== undefined;
  const stored: Record<string, string> = {};
  for (const [field, values] of [
    ['data', data],
    ['stringData', stringData],
  ] as const) {
    for (const [key, value] of Object.entries(values)) {
      if (!validKey(key)) return refuse(`${field} key ${JSON.stringify(key)} is not a valid key (letters, digits, '-', '_' and '.')`);
      if (typeof value !== 'string') return refuse(`${field}[${key}] is not a string`);
      if (field === 'stringData') {
        stored[key] = Buffer.from(value, 'utf8').toString('base64');
        continue;
      }
      const joined = value.includes('\n') || value.includes('\r') ? value.replace(/[\r\n]/g, '') : value;
      if (!BASE64.test(joined)) return refuse(`data[${key}] is not valid base64`);
      const canonical = Buffer.from(joined, 'base64').toString('base64');
      if (canonical !== value) changed = true;
      stored[key] = canonical;
    }
  }
  if (!changed) return { ok: true, object };
  const { stringData: _dropped, ...rest } = object;
  return {
    ok: true,
    object: { ...rest, metadata: object.metadata, ...(untyped ? { type: 'Opaque' } : {}), ...(object['data'] === undefined && object['stringData'] === undefined ? {} : { data: stored }) },
  };
}
