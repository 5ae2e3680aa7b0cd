/**
 * Storage endpoints (§7): files in maps_dir, ssl_certs_dir and
 * general_storage_dir. Uploads are multipart (`file_upload`, the part's
 * filename names the file), map and certificate replacements plain text,
 * general replacements multipart again. Writes that HAProxy only sees on a
 * reload schedule one (202 + Reload-Id) unless skip_reload/force_reload.
 */
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmulatorContext } from './context.ts';
import { certificateInfo } from './certificate-info.ts';
import { ApiError, booleanParam, empty, json, mediaType } from './http-kit.ts';
import type { ApiRequest, ApiResponse } from './http-kit.ts';
import { parseMultipart } from './multipart.ts';
import type { PathView } from './pod.ts';
import { ReloadFailedError } from './reload-agent.ts';
import type { Router } from './router.ts';
import { sanitizeStorageName, storedName } from './storage-names.ts';

const PREFIX = '/v3/services/haproxy/storage';

interface Kind {
  readonly path: string;
  readonly dir: string;
  readonly description: string;
}

export function registerStorageRoutes(router: Router, context: EmulatorContext): void {
  const maps: Kind = { path: `${PREFIX}/maps`, dir: context.dirs.maps, description: 'managed map file' };
  const general: Kind = { path: `${PREFIX}/general`, dir: context.dirs.general, description: 'managed general use file' };
  const ssl: Kind = { path: `${PREFIX}/ssl_certificates`, dir: context.dirs.ssl, description: 'managed SSL file' };

  /** skip_reload → 204/skipStatus, force_reload → synchronous reload, else 202 + Reload-Id. */
  const reloadAnswer = async (request: ApiRequest, doneStatus: number, body?: unknown): Promise<ApiResponse> => {
    const done = (): ApiResponse => (body === undefined ? empty(doneStatus) : json(doneStatus, body));
    if (booleanParam(request.query, 'skip_reload')) return done();
    if (booleanParam(request.query, 'force_reload')) {
      await forceReload(context);
      return done();
    }
    const headers = { 'Reload-Id': context.agent.schedule() };
    return body === undefined ? empty(202, headers) : json(202, body, headers);
  };

  const { paths } = context;
  for (const kind of [maps, general, ssl]) {
    router.add('GET', kind.path, async () => json(200, await listFiles(kind, paths)));
    router.add('DELETE', `${kind.path}/{name}`, async (request) => {
      const file = await existing(kind, request.params['name']!);
      rejectReferenced(context, file);
      await rm(file, { force: true });
      if (kind !== ssl) return empty(204);
      // 3.2 answers a certificate delete 202 + Reload-Id (204 with skip_reload/force_reload). 3.4 first asks
      // HAProxy to drop it at runtime and answers 204 when it did (DeleteStorageSSLCertificate, v3.4.2
      // handlers/storage/ssl_certificates/ssl_certificates.go), but names it by its storage name
      // (DeleteCertEntry(name)) where HAProxy knows a certificate by the path it loaded it from: so 202 and
      // a reload there too (seen on dataplaneapi v3.4.2, a certificate it had pushed at runtime).
      const reloading = booleanParam(request.query, 'skip_reload') || booleanParam(request.query, 'force_reload');
      if (context.release.chiWire && !reloading) {
        const dropped = await context.runtime.execute(`del ssl cert ${request.params['name']!}`).then(
          () => true,
          () => false,
        );
        if (dropped) return empty(204);
      }
      return reloadAnswer(request, 204);
    });
  }

  // --- maps ----------------------------------------------------------------

  // The answer and the listing name each map by its path in maps_dir (v3.3.5 handlers/map_storage.go), which
  // is where the runtime map endpoints resolve a storage name to (§6).
  router.add('POST', maps.path, async (request) => {
    const upload = fileUpload(request);
    let name = sanitizeStorageName(upload.filename);
    if (!name.endsWith('.map')) name = `${name}.map`;
    const file = await create(maps, name, upload.data, paths);
    return json(201, { ...(await fileModel(maps, file, paths)), size: upload.data.length });
  });

  router.add('GET', `${maps.path}/{name}`, async (request) => rawFile(await existing(maps, request.params['name']!)));

  router.add('PUT', `${maps.path}/{name}`, async (request) => {
    const file = await existing(maps, request.params['name']!);
    await writeFile(file, textBody(request));
    return reloadAnswer(request, 204);
  });

  // --- general files -------------------------------------------------------

  router.add('POST', general.path, async (request) => {
    const upload = fileUpload(request);
    const file = await create(general, sanitizeStorageName(upload.filename), upload.data, paths);
    return json(201, { ...(await fileModel(general, file, paths)), size: upload.data.length });
  });

  router.add('GET', `${general.path}/{name}`, async (request) => rawFile(await existing(general, request.params['name']!)));

  router.add('PUT', `${general.path}/{name}`, async (request) => {
    const file = await existing(general, request.params['name']!);
    // Unlike maps, a general file is replaced with a multipart upload (§7).
    await writeFile(file, fileUpload(request).data);
    return reloadAnswer(request, 204);
  });

  // --- certificates ----------------------------------------------------------

  // v3.3.5 handlers/ssl_cert_storage.go: every answer describes the certificate (certificate-info.ts), never
  // carries the PEM. A write without skip_reload or force_reload pushes the certificate to HAProxy by its
  // stored path (pushCertToRuntime, 3.2 on: release.ts) and reloads when that fails; with skip_reload it only
  // writes the file, and HAProxy serves the old certificate until a reload or a runtime update.
  const certificateAnswer = async (request: ApiRequest, file: string, pem: string, isNew: boolean): Promise<ApiResponse> => {
    const model = { ...(await fileModel(ssl, file, paths)), ...certificateInfo(pem, Buffer.byteLength(pem)) };
    const done = isNew ? 201 : 200;
    if (booleanParam(request.query, 'skip_reload')) return json(done, model);
    if (booleanParam(request.query, 'force_reload')) {
      await forceReload(context);
      return json(done, model);
    }
    if (context.release.runtimeCertificates && (await pushCertificate(context, file, pem, isNew))) return json(done, model);
    return json(202, model, { 'Reload-Id': context.agent.schedule() });
  };

  router.add('POST', ssl.path, async (request) => {
    const upload = fileUpload(request);
    const name = sanitizeStorageName(upload.filename);
    const file = join(ssl.dir, name);
    if (await exists(file)) throw new ApiError(409, `object already exists: file ${paths.toClient(file)} already exists`);
    requireCertificateAndKey(upload.data);
    await writeFile(file, upload.data);
    return certificateAnswer(request, file, upload.data.toString('utf8'), true);
  });

  router.add('GET', `${ssl.path}/{name}`, async (request) => {
    const file = await existing(ssl, request.params['name']!);
    const content = await readFile(file, 'utf8');
    return json(200, { ...(await fileModel(ssl, file, paths)), ...certificateInfo(content, Buffer.byteLength(content)) });
  });

  router.add('PUT', `${ssl.path}/{name}`, async (request) => {
    const file = await existing(ssl, request.params['name']!);
    const pem = textBody(request);
    requireCertificateAndKey(Buffer.from(pem));
    await writeFile(file, pem);
    return certificateAnswer(request, file, pem, false);
  });
}

async function forceReload(context: EmulatorContext): Promise<void> {
  try {
    await context.agent.forceReload();
  } catch (error) {
    if (error instanceof ReloadFailedError) throw new ApiError(400, error.message);
    throw error;
  }
}

async function listFiles(kind: Kind, paths: PathView): Promise<Record<string, unknown>[]> {
  const entries = await readdir(kind.dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ file: paths.toClient(join(kind.dir, name)), storage_name: name, description: kind.description }));
}

async function fileModel(kind: Kind, file: string, paths: PathView): Promise<Record<string, unknown>> {
  const name = file.slice(kind.dir.length + 1);
  const size = (await stat(file)).size;
  return { file: paths.toClient(file), storage_name: name, description: kind.description, size };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

/** The stored file named in the URL; 404 when there is none. */
async function existing(kind: Kind, name: string): Promise<string> {
  const file = join(kind.dir, storedName(name));
  if (!(await exists(file))) throw new ApiError(404, `missing object: file ${name} does not exist`);
  return file;
}

async function create(kind: Kind, name: string, data: Buffer, paths: PathView): Promise<string> {
  const file = join(kind.dir, name);
  if (await exists(file)) throw new ApiError(409, `object already exists: file ${paths.toClient(file)} already exists`);
  await writeFile(file, data);
  return file;
}

async function rawFile(file: string): Promise<ApiResponse> {
  return { status: 200, contentType: 'application/octet-stream', body: await readFile(file) };
}

function fileUpload(request: ApiRequest): { filename: string; data: Buffer } {
  const part = parseMultipart(request.body, request.headers['content-type']).find((entry) => entry.name === 'file_upload');
  if (part === undefined) throw new ApiError(400, 'file_upload in formData is required');
  if (part.filename === undefined || part.filename === '') throw new ApiError(400, 'file_upload has no file name');
  return { filename: part.filename, data: part.data };
}

function textBody(request: ApiRequest): string {
  const type = mediaType(request);
  if (type !== '' && type !== 'text/plain') {
    throw new ApiError(415, `unsupported media type ${JSON.stringify(type)}, only [text/plain] are available`);
  }
  return request.body.toString('utf8');
}

/** Not a ConfError in client-native, so DPAPI's default mapping makes it a 500 (§7). */
function requireCertificateAndKey(pem: Buffer): void {
  const text = pem.toString('utf8');
  if (!text.includes('-----BEGIN CERTIFICATE-----') || !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new ApiError(500, 'file should contain both certificate and private key');
  }
}

/**
 * DPAPI's reference check before a delete (§7): a non-comment line of the
 * parser's configuration that contains the file's absolute path is a 409,
 * reported with DPAPI's off-by-one line number. A reference by another
 * spelling (a path relative to `default-path`) is not seen, as in DPAPI.
 */
function rejectReferenced(context: EmulatorContext, ownFile: string): void {
  // In pod mode the parser holds the posted text, which names the file by the pod's path.
  const file = context.paths.toClient(ownFile);
  const lines = context.store.parsedText.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (line.includes(file) && !line.startsWith('#')) {
      throw new ApiError(409, `rejecting attempt to delete file ${file} referenced in haproxy conf at line ${index - 1}: ${line}`);
    }
  }
}

/**
 * pushCertToRuntime (v3.3.5 handlers/ssl_cert_storage.go): `new ssl cert`
 * (for a new file), `set ssl cert` with the PEM, `commit ssl cert`, by the
 * file's path in ssl_certs_dir, which HAProxy knows only when the
 * configuration names the certificate by that path. False when HAProxy
 * refuses; like DPAPI, nothing aborts a transaction left open.
 */
async function pushCertificate(context: EmulatorContext, file: string, pem: string, isNew: boolean): Promise<boolean> {
  const { runtime } = context;
  try {
    if (isNew) await runtime.execute(`new ssl cert ${file}`);
    await runtime.execute(`set ssl cert ${file}`, heredocPayload(pem));
    const committed = await runtime.execute(`commit ssl cert ${file}`);
    return committed.includes('Committing') && committed.includes('Success!');
  } catch {
    return false;
  }
}

/** A payload as HAProxy reads it after `<<`: up to the first empty line. */
export function heredocPayload(text: string): string {
  const lines = text.split('\n');
  const end = lines.findIndex((line) => line.trim() === '');
  return (end < 0 ? lines : lines.slice(0, end)).join('\n');
}
