/**
 * What differs between the Data Plane API releases the emulator stands for
 * (EmulatorOptions.release), each from the real source of the release named:
 *
 * - path-parameter patterns: client-native commit 7eb6211e gives runtime map
 *   names, map entry ids, runtime certificate names and every `parent_name`
 *   the pattern `^[^\r\n<>*;$#&{}"]+$` (in the embedded_spec.go of
 *   dataplaneapi v3.0.19+, v3.2.11+, v3.3.3+; not in any v3.1). Values are
 *   matched after percent-decoding. go-swagger (<= 3.3.5) answers 422
 *   `{"code":605,"message":"<name> in path should match '<pattern>'"}`
 *   (go-openapi/errors FailedPattern); the chi server of 3.4 answers 400
 *   `<name> in path: string doesn't match the regular expression "<pattern>"`
 *   (handlers/middleware/middleware.go normalizeValidationError);
 * - runtime certificate endpoints `/runtime/ssl_certs[/{name}]` and the
 *   runtime push of a storage certificate write without skip_reload
 *   (handlers/ssl_certs_runtime.go, pushCertToRuntime in
 *   handlers/ssl_cert_storage.go): from v3.2.0 (commit cc259ef7);
 * - `weight`, `address` and `port` in a runtime server PUT
 *   (handlers/runtime_server.go): from v3.3.4; earlier releases ignore them;
 * - the reload id's pattern `^\d{4}-\d{2}-\d{2}-\d+$` (the spec's `reloads/{id}`
 *   in embedded_spec.go of v3.0.23, v3.1.14 and v3.2.15), refused as each
 *   release refuses a path pattern (checked on dataplaneapi v3.2.15 and v3.4.2);
 * - the wire of the chi rewrite (3.3.6+, all of 3.4), against go-swagger's
 *   (3.0 to 3.3.5): Basic auth before routing, so an unknown path answers
 *   401 without credentials (the request flow in configure_data_plane.go at
 *   v3.4.2: BasicAuth, MaxBodySize, then the chi router), and a missing
 *   Authorization header is "missing or invalid authorization" where
 *   go-openapi says "unauthenticated for invalid credentials"
 *   (adapters/adapters.go at v3.4.2; both seen on v3.2.15 and v3.4.2); an
 *   error's `code` is its HTTP status, never go-swagger's 6xx (writeError in
 *   handlers/middleware/middleware.go); raw configuration errors go out as
 *   application/json and a raw POST takes text/plain only
 *   (handlers/configuration/raw); a certificate delete first asks HAProxy
 *   to drop it at runtime (`del ssl cert <storage name>`, which HAProxy,
 *   knowing it by its path, refuses), 202 + Reload-Id when that fails
 *   (DeleteStorageSSLCertificate in handlers/storage/ssl_certificates/
 *   ssl_certificates.go).
 *
 * Which release an instance stands for by default is the one paired with the
 * HAProxy it fronts (pairedRelease): the haproxytech/haproxy-debian images
 * build HAProxy 3.0 with DPAPI 3.0.23, 3.2 with 3.2.15, 3.3 with 3.3.7, 3.4
 * with 3.4.2, and 2.6 with 3.4.2.
 */
import { ApiError } from './http-kit.ts';
import type { ApiRequest } from './http-kit.ts';

import type { HaproxyVersion } from '../../../lib/haproxy/capabilities.ts';

export type Release = '3.0' | '3.1' | '3.2' | '3.3' | '3.4';

/** The release each one stands for: the newest of its line when this emulator was written. */
const VERSIONS: Readonly<Record<Release, string>> = {
  '3.0': 'v3.0.23',
  '3.1': 'v3.1.14',
  '3.2': 'v3.2.15',
  '3.3': 'v3.3.5',
  '3.4': 'v3.4.2',
};

export const PATH_PATTERN = /^[^\r\n<>*;$#&{}"]+$/;
const PATTERN_TEXT = String.raw`^[^\r\n<>*;$#&{}"]+$`;
const RELOAD_ID = /^\d{4}-\d{2}-\d{2}-\d+$/;
const RELOAD_ID_TEXT = String.raw`^\d{4}-\d{2}-\d{2}-\d+$`;

export interface ReleaseFeatures {
  readonly release: Release;
  /** `/info`'s api.version. */
  readonly version: string;
  readonly runtimeCertificates: boolean;
  readonly runtimeServerFields: boolean;
  /** The chi server's wire (3.4): auth before routing, `code` = status, JSON raw errors, text/plain raw bodies only, a runtime certificate delete tried first. */
  readonly chiWire: boolean;
  /** Refuses a path parameter the pattern does not match, as this release answers it. */
  checkPathParams(request: ApiRequest, names: readonly string[]): void;
  /** Refuses a reload id that is not `YYYY-MM-DD-n`, as this release answers it. */
  checkReloadId(request: ApiRequest): void;
  /** The 401 message for a request without a readable Authorization header. */
  readonly missingCredentials: string;
}

export function releaseFeatures(release: Release): ReleaseFeatures {
  const major = Number(release.split('.')[1]);
  return {
    release,
    version: `${VERSIONS[release]} emulator`,
    runtimeCertificates: major >= 2,
    runtimeServerFields: major >= 3,
    chiWire: major >= 4,
    missingCredentials: major >= 4 ? 'missing or invalid authorization' : 'unauthenticated for invalid credentials',
    checkPathParams(request, names) {
      if (release === '3.1') return;
      for (const name of names) refuseUnmatched(release, request, name, PATH_PATTERN, PATTERN_TEXT);
    },
    checkReloadId(request) {
      refuseUnmatched(release, request, 'id', RELOAD_ID, RELOAD_ID_TEXT);
    },
  };
}

function refuseUnmatched(release: Release, request: ApiRequest, name: string, pattern: RegExp, text: string): void {
  const value = request.params[name];
  if (value === undefined || pattern.test(value)) return;
  if (release === '3.4') throw new ApiError(400, `${name} in path: string doesn't match the regular expression "${text}"`);
  throw new ApiError(422, `${name} in path should match '${text}'`, { code: 605 });
}

/** The DPAPI release the haproxytech/haproxy-debian image of this HAProxy bundles (above). */
export function pairedRelease(haproxy: Pick<HaproxyVersion, 'major' | 'minor'>): Release {
  const minor = `${haproxy.major}.${haproxy.minor}`;
  return minor === '3.0' || minor === '3.1' || minor === '3.2' || minor === '3.3' ? minor : '3.4';
}
