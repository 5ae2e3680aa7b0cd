/**
 * Runtime certificate endpoints, from v3.2 on (release.ts): v3.3.5
 * handlers/ssl_certs_runtime.go over client-native v6.3.8 runtime/certs.go.
 * A certificate is named as HAProxy names it: the path the configuration
 * (or a crt-list) wrote, `ssl/site.pem` for a relative one. No reload, no
 * version change; the file on disk is not touched.
 *
 * - GET `/runtime/ssl_certs`: `show ssl cert`, one `{storage_name,
 *   description}` per certificate (parseCerts: names under `# transaction`
 *   skipped, description the last path element);
 * - GET `/runtime/ssl_certs/{name}`: `show ssl cert <name>` (parseCertEntry);
 * - PUT `/runtime/ssl_certs/{name}`: multipart `file_upload`, then
 *   `set ssl cert <name> <<` with the PEM and `commit ssl cert <name>`
 *   (SetCertificate, CommitCertificate): 200 with no body. A failure is a
 *   500 (misc.HandleError: client-native's ErrGeneral maps to nothing else),
 *   and a transaction `set` opened stays open: DPAPI never aborts one.
 *
 * Creating (POST) and deleting (DELETE) runtime certificates are not emulated.
 */
import type { EmulatorContext } from './context.ts';
import { ApiError, empty, json } from './http-kit.ts';
import type { ApiRequest, ApiResponse } from './http-kit.ts';
import { parseMultipart } from './multipart.ts';
import type { Router } from './router.ts';
import { answeringErrors } from './runtime-socket.ts';
import { heredocPayload } from './storage-api.ts';

const PREFIX = '/v3/services/haproxy/runtime/ssl_certs';

/** `show ssl cert <name>` field names and the model fields they fill. */
const ENTRY_FIELDS: Readonly<Record<string, string>> = {
  Filename: 'storage_name',
  Status: 'status',
  Serial: 'serial',
  'Subject Alternative Name': 'subject_alternative_names',
  Algorithm: 'algorithm',
  'SHA1 FingerPrint': 'sha1_finger_print',
  Subject: 'subject',
  Issuer: 'issuers',
  'Chain Subject': 'chain_subject',
  'Chain Issuer': 'chain_issuer',
};

export function registerRuntimeCertificateRoutes(router: Router, context: EmulatorContext): void {
  if (!context.release.runtimeCertificates) return;
  const { runtime } = context;
  const failing = (handler: (request: ApiRequest) => Promise<ApiResponse>) =>
    answeringErrors((error) => (error instanceof ApiError ? error : new ApiError(500, `${runtime.path} ${(error as Error).message}`)), handler);
  // HAProxy names a certificate by this instance's path; the client knows the pod's (pod.ts).
  const own = (name: string): string => context.paths.toHAProxy(name);

  router.add(
    'GET',
    PREFIX,
    failing(async () => {
      const certificates: { storage_name: string; description: string }[] = [];
      let transaction = false;
      for (const raw of (await runtime.execute('show ssl cert')).split('\n')) {
        const line = raw.trim();
        if (line.startsWith('# transaction')) transaction = true;
        else if (line.startsWith('# filename')) transaction = false;
        if (transaction || line === '' || line.startsWith('#')) continue;
        const name = context.paths.toClient(line);
        certificates.push({ storage_name: name, description: name.split('/').pop() ?? name });
      }
      return json(200, certificates);
    }),
  );

  router.add(
    'GET',
    `${PREFIX}/{name}`,
    failing(async (request) => {
      context.release.checkPathParams(request, ['name']);
      const answer = await runtime.execute(`show ssl cert ${own(request.params['name']!)}`);
      const entry: Record<string, string> = {};
      for (const line of answer.split('\n')) {
        const cut = line.indexOf(': ');
        const field = cut < 0 ? undefined : ENTRY_FIELDS[line.slice(0, cut).trim()];
        if (field !== undefined) entry[field] = line.slice(cut + 2);
      }
      if (entry['storage_name'] === undefined) throw new ApiError(500, `${runtime.path} ${answer}`);
      entry['storage_name'] = context.paths.toClient(entry['storage_name']);
      return json(200, entry);
    }),
  );

  router.add(
    'PUT',
    `${PREFIX}/{name}`,
    failing(async (request) => {
      context.release.checkPathParams(request, ['name']);
      const name = own(request.params['name']!);
      const part = parseMultipart(request.body, request.headers['content-type']).find((entry) => entry.name === 'file_upload');
      if (part === undefined) throw new ApiError(400, 'file_upload in formData is required');
      const set = await runtime.execute(`set ssl cert ${name}`, heredocPayload(part.data.toString('utf8')));
      // transactionOK (client-native runtime/ca_files.go): the case varies between HAProxy versions.
      if (!/transaction (created|updated)/i.test(set)) throw new ApiError(500, `${runtime.path} ${set}`);
      const committed = await runtime.execute(`commit ssl cert ${name}`);
      if (!committed.includes('Committing') || !committed.includes('Success!')) {
        throw new ApiError(500, `${runtime.path} ${committed}`);
      }
      return empty(200);
    }),
  );
}
