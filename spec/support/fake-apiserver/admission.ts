/**
 * Validating admission webhooks, called as a real API server calls them
 * (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/):
 *
 * - which webhooks apply (generic/webhook.go ShouldCallHook): the
 *   namespaceSelector on the namespace's labels (predicates/namespace,
 *   cluster-scoped objects always match), the objectSelector on the labels
 *   of the object or the old object (predicates/object), a rule matching
 *   operation, group, version, resource/subresource and scope
 *   (predicates/rules), then every matchCondition (CEL over object,
 *   oldObject and request) true; a condition that errs applies the
 *   failurePolicy (matchconditions/matcher.go). Webhook configurations
 *   themselves are never sent to webhooks (IsExemptAdmissionConfigurationResource);
 * - the call (validating/dispatcher.go callHook, util/webhook/client.go):
 *   an admission.k8s.io/v1 AdmissionReview with a fresh uid
 *   (request/admissionreview.go CreateV1AdmissionReview) POSTed over
 *   HTTP/1.1 to clientConfig.url, or to https://NAME.NAMESPACE.svc:PORT/PATH
 *   for a Service (port 443 by default), with ServerName NAME.NAMESPACE.svc
 *   and the caBundle as the trusted CAs; `?timeout=Ns` and a deadline of
 *   timeoutSeconds (default 10); dry runs only to webhooks whose
 *   sideEffects are None or NoneOnDryRun, or the request fails 400;
 * - the answer (VerifyAdmissionResponse): an AdmissionReview of v1 with
 *   the request's uid, no patch; anything else, a transport error, a
 *   timeout or a non-2xx answer is a failure to call the webhook, which
 *   the failurePolicy (default Fail) decides: Ignore admits, Fail answers
 *   500 "Internal error occurred: failed calling webhook ...";
 * - a denial (errors/statuserror.go ToStatusErr): the webhook's status,
 *   code 400 unless it gave one of 400 or more, its reason (none unless
 *   given), message `admission webhook "<webhook>" denied the request:
 *   <message>`;
 * - every webhook that applies is called at once; the first error wins;
 *   the warnings of every answer go back as `Warning: 299 - "..."`
 *   headers, which kubectl prints.
 *
 * Services are reached through a resolver the test gives (the real server
 * resolves them to the Service's endpoints). Mutating webhooks, DELETE and
 * CONNECT admission, matchPolicy Equivalent, authorizer checks in
 * matchConditions and audit annotations are not implemented.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { evaluate } from '@marcbachmann/cel-js';
import { matchesLabels, parseLabelSelector } from '../../../lib/kube-syntax/label-selector.ts';
import { isJsonObject } from './json-values.ts';
import { metadataOf } from './object-meta.ts';
import type { Registry } from './registry.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';
import { StatusError, badRequest, qualifiedResource, serverError, type StatusDetails } from './status.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly type: ResourceType;
  /** The request's namespace; undefined for cluster-scoped objects. */
  readonly namespace: string | undefined;
  readonly name: string;
  readonly subresource: string | undefined;
  readonly object: KubeObject;
  readonly oldObject: KubeObject | undefined;
  readonly dryRun: boolean;
}

/** Where a Service reference is served: the real server dials the Service; tests say where their webhook listens. */
export type ServiceResolver = (namespace: string, name: string, port: number) => { readonly host: string; readonly port: number } | undefined;

interface Rule {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly resources?: readonly string[];
  readonly scope?: string;
}

interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

interface Webhook {
  readonly name: string;
  readonly clientConfig: {
    readonly url?: string;
    readonly service?: { readonly namespace: string; readonly name: string; readonly path?: string; readonly port?: number };
    readonly caBundle?: string;
  };
  readonly rules?: readonly Rule[];
  readonly failurePolicy?: string;
  readonly namespaceSelector?: LabelSelectorObject;
  readonly objectSelector?: LabelSelectorObject;
  readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
  readonly sideEffects?: string;
  readonly timeoutSeconds?: number;
  readonly admissionReviewVersions?: readonly string[];
}

const exemptKinds = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** A LabelSelector object in the selector syntax lib/kube-syntax/label-selector.ts parses. */
function selectorText(selector: LabelSelectorObject | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const { key, operator, values = [] } of selector?.matchExpressions ?? []) {
    if (operator === 'In') parts.push(`${key} in (${values.join(',')})`);
    else if (operator === 'NotIn') parts.push(`${key} notin (${values.join(',')})`);
    else if (operator === 'Exists') parts.push(key);
    else if (operator === 'DoesNotExist') parts.push(`!${key}`);
  }
  return parts.join(',');
}

function labelsMatch(selector: LabelSelectorObject | undefined, labels: unknown): boolean {
  const text = selectorText(selector);
  if (text === '') return true;
  return matchesLabels(parseLabelSelector(text), isJsonObject(labels) ? (labels as Record<string, string>) : undefined);
}

function exactOrWildcard(items: readonly string[] | undefined, requested: string): boolean {
  return (items ?? []).some((item) => item === '*' || item === requested);
}

function ruleMatches(rule: Rule, attributes: AdmissionAttributes): boolean {
  const { type, operation } = attributes;
  const scope = rule.scope ?? '*';
  const namespaced = attributes.namespace !== undefined && attributes.namespace !== '';
  if (scope === 'Namespaced' ? !namespaced : scope === 'Cluster' ? namespaced : scope !== '*') return false;
  if (!exactOrWildcard(rule.operations, operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, type.group) || !exactOrWildcard(rule.apiVersions, type.version)) return false;
  const subresource = attributes.subresource ?? '';
  return (rule.resources ?? []).some((entry) => {
    const [resource, sub = ''] = entry.split('/', 2);
    return (resource === '*' || resource === type.plural) && (sub === '*' || sub === subresource);
  });
}

class CallFailure extends Error {}

export class ValidatingAdmission {
  readonly #registry: Registry;
  readonly #resolve: ServiceResolver;

  constructor(registry: Registry, resolve: ServiceResolver) {
    this.#registry = registry;
    this.#resolve = resolve;
  }

  /**
   * The webhooks' warnings, and the error the request fails with, if any
   * (warnings reach the client with a failure too: the API server records
   * them on the response before it looks at `allowed`).
   */
  async admit(attributes: AdmissionAttributes): Promise<{ readonly warnings: readonly string[]; readonly failure: StatusError | undefined }> {
    if (attributes.type.group === 'admissionregistration.k8s.io' && exemptKinds.has(attributes.type.kind)) return { warnings: [], failure: undefined };
    const configurations = this.#registry.types.byPath('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations')!;
    const hooks = this.#registry.store.list(configurations).flatMap((configuration) => (Array.isArray(configuration['webhooks']) ? (configuration['webhooks'] as Webhook[]) : []));
    let applying: Webhook[];
    try {
      applying = hooks.filter((hook) => this.#applies(hook, attributes));
    } catch (error) {
      return { warnings: [], failure: error as StatusError };
    }
    const results = await Promise.all(applying.map((hook) => this.#call(hook, attributes)));
    return { warnings: results.flatMap((result) => result.warnings), failure: results.find((result) => result.failure !== undefined)?.failure };
  }

  #applies(hook: Webhook, attributes: AdmissionAttributes): boolean {
    const { namespace, object, oldObject } = attributes;
    if (namespace !== undefined && namespace !== '' && hook.namespaceSelector !== undefined) {
      const namespaces = this.#registry.types.byPath('', 'v1', 'namespaces')!;
      const labels = this.#registry.store.get(namespaces, '', namespace)?.['metadata'];
      if (!labelsMatch(hook.namespaceSelector, isJsonObject(labels) ? labels['labels'] : undefined)) return false;
    }
    if (hook.objectSelector !== undefined && selectorText(hook.objectSelector) !== '') {
      const labelsOf = (candidate: KubeObject | undefined) => (candidate === undefined ? undefined : metadataOf(candidate)['labels']);
      const matched = [object, oldObject].some((candidate) => candidate !== undefined && labelsMatch(hook.objectSelector, labelsOf(candidate)));
      if (!matched) return false;
    }
    if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, attributes))) return false;
    return this.#conditionsHold(hook, attributes);
  }

  #conditionsHold(hook: Webhook, attributes: AdmissionAttributes): boolean {
    const variables = { object: attributes.object, oldObject: attributes.oldObject ?? null, request: this.#request('', attributes) };
    const errors: string[] = [];
    for (const condition of hook.matchConditions ?? []) {
      try {
        if (evaluate(condition.expression, variables) === false) return false;
      } catch (error) {
        errors.push(`${condition.name}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    if (errors.length === 0) return true;
    if (hook.failurePolicy === 'Ignore') return false;
    throw new StatusError(403, 'Forbidden', `${qualifiedResource(attributes.type)} "${attributes.name}" is forbidden: ${errors.join(', ')}`);
  }

  #request(uid: string, attributes: AdmissionAttributes): Record<string, unknown> {
    const { type } = attributes;
    const gvk = { group: type.group, version: type.version, kind: type.kind };
    const gvr = { group: type.group, version: type.version, resource: type.plural };
    return {
      uid,
      kind: gvk,
      resource: gvr,
      ...(attributes.subresource ? { subResource: attributes.subresource } : {}),
      requestKind: gvk,
      requestResource: gvr,
      name: attributes.name,
      ...(attributes.namespace ? { namespace: attributes.namespace } : {}),
      operation: attributes.operation,
      userInfo: { username: 'fake-apiserver-user', groups: ['system:authenticated'] },
      object: attributes.object,
      oldObject: attributes.oldObject ?? null,
      dryRun: attributes.dryRun,
      options: { apiVersion: 'meta.k8s.io/v1', kind: attributes.operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
    };
  }

  async #call(hook: Webhook, attributes: AdmissionAttributes): Promise<{ readonly warnings: readonly string[]; readonly failure: StatusError | undefined }> {
    const none = { warnings: [], failure: undefined };
    if (attributes.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
      return { warnings: [], failure: badRequest(`admission webhook "${hook.name}" does not support dry run`) };
    }
    const uid = randomUUID();
    let answer: unknown;
    try {
      if (!(hook.admissionReviewVersions ?? []).includes('v1')) throw new CallFailure('webhook does not accept known AdmissionReview versions (v1, v1beta1)');
      answer = await this.#post(hook, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: this.#request(uid, attributes) });
    } catch (error) {
      if (hook.failurePolicy === 'Ignore') return none;
      return { warnings: [], failure: serverError(500, `failed calling webhook "${hook.name}": ${(error as Error).message}`) };
    }
    const response = isJsonObject(answer) ? answer['response'] : undefined;
    const problem =
      !isJsonObject(answer) || !isJsonObject(response)
        ? 'webhook response was absent'
        : response['uid'] !== uid
          ? `expected response.uid="${uid}", got "${String(response['uid'] ?? '')}"`
          : answer['apiVersion'] !== 'admission.k8s.io/v1' || answer['kind'] !== 'AdmissionReview'
            ? `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(answer['apiVersion'])}, Kind=${String(answer['kind'])}`
            : response['patch'] !== undefined || response['patchType'] !== undefined
              ? 'validating webhook may not return response.patch'
              : undefined;
    if (problem !== undefined || !isJsonObject(response)) {
      if (hook.failurePolicy === 'Ignore') return none;
      return { warnings: [], failure: serverError(500, `failed calling webhook "${hook.name}": received invalid webhook response: ${problem}`) };
    }
    const warnings = Array.isArray(response['warnings']) ? response['warnings'].filter((warning): warning is string => typeof warning === 'string') : [];
    if (response['allowed'] === true) return { warnings, failure: undefined };
    return { warnings, failure: this.#denial(hook, isJsonObject(response['status']) ? response['status'] : {}) };
  }

  /**
   * ToStatusErr (k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go), which the
   * validating dispatcher returns as it is: the webhook's own status, its code raised to 400 when below,
   * its reason as given (none when it gave none), its message prefixed with who denied; no
   * `<resource> "<name>" is forbidden:` of the server's own (seen against kube-apiserver 1.34.4).
   */
  #denial(hook: Webhook, result: Record<string, unknown>): StatusError {
    const given = typeof result['code'] === 'number' ? result['code'] : 0;
    const message = typeof result['message'] === 'string' ? result['message'] : '';
    const reason = typeof result['reason'] === 'string' ? result['reason'] : '';
    const deniedBy = `admission webhook "${hook.name}" denied the request`;
    const explained = message !== '' ? `${deniedBy}: ${message}` : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
    const details = isJsonObject(result['details']) ? (result['details'] as StatusDetails) : undefined;
    return new StatusError(given < 400 ? 400 : given, reason, explained, details);
  }

  #post(hook: Webhook, review: unknown): Promise<unknown> {
    const { url, service, caBundle } = hook.clientConfig;
    const timeoutSeconds = hook.timeoutSeconds ?? 10;
    let target: { host: string; port: number; path: string; servername: string | undefined };
    if (service !== undefined) {
      const port = service.port ?? 443;
      const resolved = this.#resolve(service.namespace, service.name, port);
      if (resolved === undefined) return Promise.reject(new CallFailure(`failed to call webhook: service "${service.namespace}/${service.name}" not found`));
      target = { host: resolved.host, port: resolved.port, path: service.path ?? '/', servername: `${service.name}.${service.namespace}.svc` };
    } else if (url !== undefined) {
      const parsed = new URL(url);
      target = {
        host: parsed.hostname,
        port: Number(parsed.port || 443),
        path: `${parsed.pathname}${parsed.search}`,
        servername: /^[\d.]+$|:/.test(parsed.hostname) ? undefined : parsed.hostname,
      };
    } else {
      return Promise.reject(new CallFailure('webhook configuration must have either service or URL'));
    }
    const path = `${target.path}${target.path.includes('?') ? '&' : '?'}timeout=${timeoutSeconds}s`;
    const body = JSON.stringify(review);
    return new Promise((resolve, reject) => {
      const request = httpsRequest(
        {
          host: target.host,
          port: target.port,
          path,
          method: 'POST',
          ...(target.servername === undefined ? {} : { servername: target.servername }),
          ca: caBundle === undefined ? [] : Buffer.from(caBundle, 'base64').toString('utf8'),
          agent: false,
          timeout: timeoutSeconds * 1000,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) > 299) {
              let message = text;
              try {
                const parsed: unknown = JSON.parse(text);
                if (isJsonObject(parsed) && typeof parsed['message'] === 'string') message = parsed['message'];
              } catch {
                // Not a Status: the body as it came.
              }
              reject(new CallFailure(`failed to call webhook: the server responded with the status code ${response.statusCode}: ${message}`));
              return;
            }
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(new CallFailure(`received invalid webhook response: ${(error as Error).message}`));
            }
          });
        },
      );
      // A deadline for the whole call, as the dispatcher's context has, not only for idle sockets.
      const deadline = setTimeout(
        () => request.destroy(new CallFailure(`failed to call webhook: Post "https://${target.servername ?? target.host}:${target.port}${path}": context deadline exceeded`)),
        timeoutSeconds * 1000,
      );
      request.on('close', () => clearTimeout(deadline));
      request.on('error', (error) =>
        reject(error instanceof CallFailure ? error : new CallFailure(`failed to call webhook: Post "https://${target.servername ?? target.host}:${target.port}${path}": ${error.message}`)),
      );
      request.end(body);
    });
  }
}
