import type { KubeObject } from '../pipeline/model.ts';

/**
 * The `admission.k8s.io/v1` AdmissionReview a validating webhook receives
 * and answers. What the API server sends and checks is in kubernetes'
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go
 * (CreateV1AdmissionReview, VerifyAdmissionResponse): the answer must be an
 * AdmissionReview of the same apiVersion with `response.uid` equal to the
 * request's, and a validating webhook may not send a patch.
 */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface AdmissionRequest {
  readonly uid: string;
  /** The resource as the webhook's rules matched it. */
  readonly resource: GroupVersionResource;
  /** '' for the object itself, `status` for the status subresource. */
  readonly subResource: string;
  readonly kind: string;
  readonly operation: Operation;
  readonly namespace: string | undefined;
  readonly name: string;
  /** The object as it would be stored (CREATE, UPDATE). */
  readonly object: KubeObject | undefined;
  /** The object as stored now (UPDATE, DELETE). */
  readonly oldObject: KubeObject | undefined;
  readonly dryRun: boolean;
}

export type ReadReview = { readonly ok: true; readonly request: AdmissionRequest } | { readonly ok: false; readonly reason: string };

export const admissionApiVersion = 'admission.k8s.io/v1';
const operations = new Set<string>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An embedded object: a mapping with metadata.name, or absent (the API server sends null for none). */
function embedded(value: unknown): KubeObject | undefined | false {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || !isRecord(value['metadata'])) return false;
  return value as unknown as KubeObject;
}

/** Reads an AdmissionReview request body, already parsed from JSON. */
export function readAdmissionReview(body: unknown): ReadReview {
  if (!isRecord(body)) return { ok: false, reason: 'the body is not a JSON object' };
  if (body['apiVersion'] !== admissionApiVersion || body['kind'] !== 'AdmissionReview') {
    return { ok: false, reason: `expected an AdmissionReview of ${admissionApiVersion}, got kind ${JSON.stringify(body['kind'])} of ${JSON.stringify(body['apiVersion'])}` };
  }
  const request = body['request'];
  if (!isRecord(request)) return { ok: false, reason: 'the AdmissionReview has no request' };
  const uid = text(request['uid']);
  if (uid === '') return { ok: false, reason: 'request.uid is missing' };
  const operation = text(request['operation']);
  if (!operations.has(operation)) return { ok: false, reason: `request.operation ${JSON.stringify(request['operation'])} is not CREATE, UPDATE, DELETE or CONNECT` };
  const resource = isRecord(request['resource']) ? request['resource'] : {};
  const object = embedded(request['object']);
  const oldObject = embedded(request['oldObject']);
  if (object === false || oldObject === false) return { ok: false, reason: 'request.object and request.oldObject must be Kubernetes objects' };
  const namespace = text(request['namespace']);
  return {
    ok: true,
    request: {
      uid,
      resource: { group: text(resource['group']), version: text(resource['version']), resource: text(resource['resource']) },
      subResource: text(request['subResource']),
      kind: isRecord(request['kind']) ? text(request['kind']['kind']) : '',
      operation: operation as Operation,
      namespace: namespace === '' ? undefined : namespace,
      name: text(request['name']),
      object,
      oldObject,
      dryRun: request['dryRun'] === true,
    },
  };
}

export interface AdmissionVerdict {
  readonly allowed: boolean;
  /** Why it was denied: what `kubectl` prints after "admission webhook ... denied the request: ". */
  readonly message?: string;
  /** Shown by kubectl as `Warning: ...` lines, for an allowed request too. */
  readonly warnings?: readonly string[];
}

/**
 * The API server passes at most 4 KiB of warnings to the client and drops
 * what is not printable; each is kept short and on one line here.
 */
const maxWarnings = 10;
const maxWarningLength = 256;

function oneLine(value: string, max: number): string {
  let flat = '';
  for (const character of value) {
    const code = character.charCodeAt(0);
    flat += code < 0x20 || code === 0x7f ? ' ' : character;
  }
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The AdmissionReview answering request `uid`. A denial is 403 Forbidden, as the API server words a webhook's refusal. */
export function admissionResponse(uid: string, verdict: AdmissionVerdict): Record<string, unknown> {
  const warnings = (verdict.warnings ?? []).slice(0, maxWarnings).map((warning) => oneLine(warning, maxWarningLength));
  return {
    apiVersion: admissionApiVersion,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: verdict.allowed,
      ...(verdict.allowed ? {} : { status: { code: 403, reason: 'Forbidden', message: verdict.message ?? 'denied' } }),
      ...(warnings.length > 0 ? { warnings } : {}),
    },
  };
}
