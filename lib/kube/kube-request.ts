import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';

/** A failed API request, with the Status body's reason and message when the server sent one. */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
  readonly status: number;
  readonly reason: string | undefined;
  /** Seconds from a Retry-After header (429, 503), when present. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, status: number, reason: string | undefined, retryAfterSeconds: number | undefined) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  /** For PATCH; merge patch unless given. */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/**
 * One JSON request with the kubeconfig's server, credentials and TLS
 * settings, exactly as client-node's own watch sends them. Used where the
 * typed clients would reshape objects (LIST of arbitrary resources): the
 * controller must see LIST and WATCH objects in the same raw JSON form.
 */
export async function kubeRequest(kubeConfig: KubeConfig, request: KubeRequest): Promise<unknown> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(cluster.server + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
  const context = new RequestContext(url.toString(), HttpMethod[request.method]);
  await kubeConfig.applySecurityAuthentication(context);
  const headers = context.getHeaders();
  headers['accept'] = 'application/json';
  if (request.body !== undefined) {
    headers['content-type'] = request.method === 'PATCH' ? (request.contentType ?? 'application/merge-patch+json') : 'application/json';
  }
  const response = await fetch(url, {
    method: request.method,
    headers,
    dispatcher: context.getDispatcher(),
    signal: request.signal,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.ok) return body;
  const status = body as { message?: unknown; reason?: unknown } | undefined;
  const message = typeof status?.message === 'string' ? status.message : text.slice(0, 200) || response.statusText;
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new KubeRequestError(
    `${request.method} ${request.path}: ${response.status} ${message}`,
    response.status,
    typeof status?.reason === 'string' ? status.reason : undefined,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}
