/**
 * Type-specific validation of the built-in kinds the controller writes
 * (events.k8s.io/v1 Events, coordination.k8s.io/v1 Leases), after
 * Kubernetes' pkg/apis/core/validation/events.go and the Lease validation,
 * so a controller bug shows up as the 422 a cluster would answer; and the
 * Ingress host and path rules every test fixture must meet.
 *
 * Event field paths are those of the server's internal Event type, as the
 * real messages name them: `regarding` is `involvedObject`, `note` is
 * `message`, the `deprecated*` fields lose their prefix.
 */
import { isIP } from 'node:net';
import { checkLabelKey, isDnsSubdomain } from '../../../lib/kube-syntax/label-selector.ts';
import type { KubeObject } from './resource-types.ts';
import type { FieldError } from './status.ts';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

function text(object: KubeObject, field: string): string {
  const value = object[field];
  return typeof value === 'string' ? value : '';
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && value !== 0;
}

function required(field: string): FieldError {
  return { field, type: 'FieldValueRequired' };
}

function tooLong(field: string, limit: number): FieldError {
  return { field, type: 'FieldValueInvalid', value: '', detail: `can have at most ${limit} characters` };
}

function seriesErrors(object: KubeObject): FieldError[] {
  if (object['series'] === undefined || object['series'] === null) return [];
  const series = record(object['series']);
  const errors: FieldError[] = [];
  if (typeof series['count'] !== 'number' || series['count'] < 2) {
    errors.push({ field: 'series.count', type: 'FieldValueInvalid', value: '', detail: 'should be at least 2' });
  }
  if (!isSet(series['lastObservedTime'])) errors.push(required('series.lastObservedTime'));
  return errors;
}

/** What an events.k8s.io/v1 Event must satisfy on create. */
export function validateEventsV1(event: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const namespace = typeof event.metadata?.['namespace'] === 'string' ? event.metadata['namespace'] : '';
  const regardingNamespace = text(record(event['regarding']), 'namespace');
  if (regardingNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
    errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', value: regardingNamespace, detail: 'does not match event.namespace' });
  }
  const controller = text(event, 'reportingController');
  if (controller === '') errors.push(required('reportingController'));
  else {
    const problem = checkLabelKey(controller);
    if (problem !== undefined) {
      errors.push({ field: 'reportingController', type: 'FieldValueInvalid', value: controller, detail: problem.replace(/^invalid label key "[^"]*": /, '') });
    }
  }
  const instance = text(event, 'reportingInstance');
  if (instance === '') errors.push(required('reportingInstance'));
  if (instance.length > REPORTING_INSTANCE_LIMIT) errors.push(tooLong('reportingInstance', REPORTING_INSTANCE_LIMIT));
  const action = text(event, 'action');
  if (action === '') errors.push(required('action'));
  if (action.length > ACTION_LIMIT) errors.push(tooLong('action', ACTION_LIMIT));
  const reason = text(event, 'reason');
  if (reason === '') errors.push(required('reason'));
  if (reason.length > REASON_LIMIT) errors.push(tooLong('reason', REASON_LIMIT));
  if (text(event, 'note').length > NOTE_LIMIT) errors.push(tooLong('message', NOTE_LIMIT));
  if (!isDnsSubdomain(namespace)) {
    errors.push({ field: 'namespace', type: 'FieldValueInvalid', value: namespace, detail: 'a lowercase RFC 1123 subdomain is required' });
  }
  errors.push(...seriesErrors(event));
  if (!isSet(event['eventTime'])) errors.push(required('eventTime'));
  const type = text(event, 'type');
  if (type !== 'Normal' && type !== 'Warning') {
    errors.push({ field: 'type', type: 'FieldValueInvalid', value: '', detail: `has invalid value: ${type}` });
  }
  if (isSet(event['deprecatedFirstTimestamp'])) errors.push({ field: 'firstTimestamp', type: 'FieldValueInvalid', value: '', detail: 'needs to be unset' });
  if (isSet(event['deprecatedLastTimestamp'])) errors.push({ field: 'lastTimestamp', type: 'FieldValueInvalid', value: '', detail: 'needs to be unset' });
  if (isSet(event['deprecatedCount'])) errors.push({ field: 'count', type: 'FieldValueInvalid', value: '', detail: 'needs to be unset' });
  const source = record(event['deprecatedSource']);
  if (isSet(source['component']) || isSet(source['host'])) {
    errors.push({ field: 'source', type: 'FieldValueInvalid', value: '', detail: 'needs to be unset' });
  }
  return errors;
}

/** events.k8s.io/v1 field and the internal field path messages name it by. */
const IMMUTABLE_EVENT_FIELDS: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['reason', 'reason'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingController', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

/** Only `series` (and metadata) of an events.k8s.io/v1 Event may change. */
export function validateEventsV1Update(event: KubeObject, old: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  if (JSON.stringify(event['series'] ?? null) !== JSON.stringify(old['series'] ?? null)) errors.push(...seriesErrors(event));
  for (const [field, path] of IMMUTABLE_EVENT_FIELDS) {
    if (JSON.stringify(event[field] ?? null) !== JSON.stringify(old[field] ?? null)) {
      errors.push({ field: path, type: 'FieldValueInvalid', value: event[field] ?? null, detail: 'field is immutable' });
    }
  }
  return errors;
}

/** coordination.k8s.io/v1 Lease spec rules. */
export function validateLease(lease: KubeObject): FieldError[] {
  const spec = record(lease['spec']);
  const errors: FieldError[] = [];
  const duration = spec['leaseDurationSeconds'];
  if (duration !== undefined && duration !== null && !(typeof duration === 'number' && duration > 0)) {
    errors.push({ field: 'spec.leaseDurationSeconds', type: 'FieldValueInvalid', value: duration, detail: 'must be greater than 0' });
  }
  const transitions = spec['leaseTransitions'];
  if (transitions !== undefined && transitions !== null && !(typeof transitions === 'number' && transitions >= 0)) {
    errors.push({ field: 'spec.leaseTransitions', type: 'FieldValueInvalid', value: transitions, detail: 'must be greater than or equal to 0' });
  }
  return errors;
}

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

// k8s.io/apimachinery pkg/util/validation/validation.go: IsDNS1123Subdomain and IsWildcardDNS1123Subdomain, their formats and messages.
const DNS1123_SUBDOMAIN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const WILDCARD_DNS1123_SUBDOMAIN = `\\*\\.${DNS1123_SUBDOMAIN}`;
const DNS1123_SUBDOMAIN_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`;
const WILDCARD_MESSAGE = `a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '${WILDCARD_DNS1123_SUBDOMAIN}')`;

/**
 * An Ingress rule's host, as validateIngressRules (kubernetes pkg/apis/networking/validation/validation.go)
 * checks it: no IP address, and a DNS-1123 subdomain, or a wildcard one where it holds a '*'.
 */
function hostErrors(host: unknown, field: string): FieldError[] {
  if (typeof host !== 'string' || host === '') return [];
  const invalid = (detail: string): FieldError => ({ field, type: 'FieldValueInvalid', value: host, detail });
  const errors = isIP(host) === 0 ? [] : [invalid('must be a DNS name, not an IP address')];
  const [format, message] = host.includes('*') ? [WILDCARD_DNS1123_SUBDOMAIN, WILDCARD_MESSAGE] : [DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MESSAGE];
  if (host.length > 253) errors.push(invalid('must be no more than 253 characters'));
  if (!new RegExp(`^${format}$`).test(host)) errors.push(invalid(message));
  return errors;
}

/** networking.k8s.io/v1 Ingress rules: hosts are DNS names; a pathType is required, and Exact or Prefix paths are absolute. */
export function validateIngress(ingress: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const rules = record(ingress['spec'])['rules'];
  (Array.isArray(rules) ? rules : []).forEach((rule: unknown, ruleIndex) => {
    errors.push(...hostErrors(record(rule)['host'], `spec.rules[${ruleIndex}].host`));
    const paths = record(record(record(rule)['http']))['paths'];
    (Array.isArray(paths) ? paths : []).forEach((entry: unknown, pathIndex) => {
      const at = `spec.rules[${ruleIndex}].http.paths[${pathIndex}]`;
      const path = record(entry);
      const pathType = path['pathType'];
      if (pathType === undefined || pathType === null || pathType === '') {
        errors.push({ field: `${at}.pathType`, type: 'FieldValueRequired', detail: 'pathType must be specified' });
      } else if (typeof pathType !== 'string' || !PATH_TYPES.includes(pathType)) {
        errors.push({ field: `${at}.pathType`, type: 'FieldValueNotSupported', value: pathType, detail: `supported values: ${PATH_TYPES.map((type) => `"${type}"`).join(', ')}` });
      } else if (pathType !== 'ImplementationSpecific' && !String(path['path'] ?? '').startsWith('/')) {
        errors.push({ field: `${at}.path`, type: 'FieldValueInvalid', value: path['path'] ?? '', detail: 'must be an absolute path' });
      }
    });
  });
  return errors;
}
