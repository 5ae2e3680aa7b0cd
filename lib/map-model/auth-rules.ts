import type { RouteSettings } from '../routing/settings.ts';
import { backendName } from './service-backend-name.ts';

/**
 * The arguments of the controller's external-auth actions
 * (lib/lua/external-auth.ts) as a route policy's rules write them: nginx's
 * auth-url (lua.external-auth) and Gateway API's ExternalAuth filter
 * (lua.gateway-auth), "-" for an argument not set.
 */

export interface ExternalAuthRule {
  readonly url: string;
  readonly method: string;
  readonly signin: string;
  readonly requestRedirect: string;
  readonly headers: string;
  readonly alwaysSetCookie: boolean;
}

export function externalAuthRule(auth: RouteSettings['externalAuth']): ExternalAuthRule | undefined {
  if (!auth) return undefined;
  return Object.freeze({
    url: auth.url,
    method: auth.method ?? '-',
    signin: auth.signin ?? '-',
    requestRedirect: auth.requestRedirect,
    headers: auth.responseHeaders.length === 0 ? '-' : auth.responseHeaders.join(','),
    alwaysSetCookie: auth.alwaysSetCookie,
  });
}

export interface GatewayAuthRule {
  /** The backend of the auth Service's port, reached through the internal external-auth frontend. */
  readonly backend: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: number;
  readonly path: string;
  readonly requestHeaders: string;
  readonly responseHeaders: string;
  /** The Service cannot be used (settings.gatewayExternalAuth.refused): every request answered 500. */
  readonly refused: boolean;
}

export function gatewayAuthRule(auth: RouteSettings['gatewayExternalAuth']): GatewayAuthRule | undefined {
  if (!auth) return undefined;
  const { namespace, service, port } = auth;
  return Object.freeze({
    backend: backendName(namespace, service, port),
    namespace,
    service,
    port,
    path: auth.path === '' ? '-' : auth.path,
    requestHeaders: auth.allowedHeaders.length === 0 ? '-' : auth.allowedHeaders.join(','),
    responseHeaders: auth.allowedResponseHeaders.length === 0 ? '-' : auth.allowedResponseHeaders.join(','),
    refused: auth.refused !== undefined,
  });
}
