/**
 * Client of one HAProxy Data Plane API v3 instance, following the contract in
 * docs/dataplane-api-contract.md: exact paths, query parameters and status
 * codes, over a Transport that tracks `Configuration-Version`, types errors
 * and keeps credentials out of every message.
 */
import { inspect, type InspectOptions } from 'node:util';
import { DataplaneTimeout } from './errors.ts';
import { multipartFile } from './multipart.ts';
import { apiPath } from './path.ts';
import { JSON_TYPE, reloadIdHeader, Transport, versionHeader, type Answer, type Call, type QueryValue, type TransportOptions } from './transport.ts';
import type {
  DataplaneHealth,
  DataplaneInfo,
  MapEntry,
  MapWriteOptions,
  RawConfiguration,
  RawConfigurationOptions,
  RawConfigurationResult,
  ReloadStatus,
  RuntimeAddServer,
  RuntimeCertificate,
  RuntimeMap,
  RuntimeServer,
  RuntimeServerUpdate,
  StorageFile,
  StorageKind,
  StorageWriteOptions,
  StorageWriteResult,
  StoredCertificate,
  WaitForReloadOptions,
} from './types.ts';

export type { DataplaneTlsOptions } from './tls.ts';

export type DataplaneClientOptions = TransportOptions;

export class DataplaneClient {
  /** Base URL including `/v3`, without credentials: the name of the endpoint in every message. */
  readonly endpoint: string;
  readonly #transport: Transport;

  constructor(options: DataplaneClientOptions) {
    this.#transport = new Transport(options);
    this.endpoint = this.#transport.endpoint;
  }

  /** `Configuration-Version` of the latest answer that carried one, errors included. */
  get lastVersion(): number | undefined {
    return this.#transport.lastVersion;
  }

  /** HTTP requests sent so far, retries included. */
  get requests(): number {
    return this.#transport.requests;
  }

  /** Closes pooled connections; the client cannot be used afterwards. */
  close(): void {
    this.#transport.close();
  }

  // --- info ---------------------------------------------------------------

  async info(): Promise<DataplaneInfo> {
    const call: Call = { method: 'GET', path: '/info' };
    const value = await this.#transport.json(call);
    if (!isObject(value) || !isObject(value['api'])) throw this.#transport.protocolError(call, 'info without "api"');
    return value as unknown as DataplaneInfo;
  }

  async health(): Promise<DataplaneHealth> {
    const call: Call = { method: 'GET', path: '/health' };
    const value = await this.#transport.json(call);
    if (!isObject(value) || typeof value['haproxy'] !== 'string') throw this.#transport.protocolError(call, 'health without "haproxy"');
    return value as unknown as DataplaneHealth;
  }

  async configurationVersion(): Promise<number> {
    const call: Call = { method: 'GET', path: '/services/haproxy/configuration/version' };
    const value = await this.#transport.json(call);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.#transport.protocolError(call, `version is not an integer: ${JSON.stringify(value)}`);
    return value;
  }

  // --- raw configuration --------------------------------------------------

  async getRawConfiguration(): Promise<RawConfiguration> {
    const call: Call = { method: 'GET', path: '/services/haproxy/configuration/raw', accept: 'text/plain, */*' };
    const answer = await this.#transport.request(call);
    // The header is the contract; the file's own `# _version=` line is the
    // same number and covers a proxy that drops headers.
    const version = versionHeader(answer.headers) ?? fileVersion(answer.text);
    if (version === undefined) throw this.#transport.protocolError(call, 'no Configuration-Version header and no "# _version=" line');
    return { text: answer.text, version, checksum: answer.headers.get('configuration-checksum') ?? undefined };
  }

  async postRawConfiguration(text: string, options: RawConfigurationOptions = {}): Promise<RawConfigurationResult> {
    const headers: Record<string, string> = {};
    const actions = options.runtimeActions ?? [];
    for (const action of actions) {
      // ';' separates actions and a line break would end the header: either would run something else than asked.
      if (/[;\r\n]/.test(action)) throw new TypeError(`runtime action must not contain ';' or a line break: ${JSON.stringify(action)}`);
    }
    if (actions.length > 0) headers['X-Runtime-Actions'] = actions.join(';');
    const answer = await this.#transport.request({
      method: 'POST',
      path: '/services/haproxy/configuration/raw',
      query: {
        version: options.version,
        skip_version: options.skipVersion,
        skip_reload: options.skipReload,
        only_validate: options.onlyValidate,
        force_reload: options.forceReload,
      },
      body: text,
      contentType: 'text/plain',
      accept: 'text/plain, */*',
      headers,
    });
    return {
      status: answer.status,
      reloadId: reloadIdHeader(answer.headers),
      version: versionHeader(answer.headers),
      body: answer.text,
      checksum: answer.headers.get('configuration-checksum') ?? undefined,
    };
  }

  // --- reloads ------------------------------------------------------------

  async reload(id: string): Promise<ReloadStatus> {
    const call: Call = { method: 'GET', path: apiPath`/services/haproxy/reloads/${id}` };
    const value = await this.#transport.json(call);
    if (!isObject(value) || !['failed', 'in_progress', 'succeeded'].includes(value['status'] as string)) {
      throw this.#transport.protocolError(call, `unexpected reload ${JSON.stringify(value)}`);
    }
    return {
      ...(value as object),
      id: typeof value['id'] === 'string' ? value['id'] : id,
      status: value['status'] as ReloadStatus['status'],
      response: typeof value['response'] === 'string' ? value['response'] : '',
    };
  }

  /**
   * Polls a reload until it succeeded or failed. A failed reload resolves
   * (with HAProxy's output in `response`) rather than rejecting, so the
   * caller reports why; only running out of time rejects (DataplaneTimeout).
   */
  async waitForReload(id: string, options: WaitForReloadOptions = {}): Promise<ReloadStatus> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const pollMs = options.pollMs ?? 500;
    const clock = options.clock ?? this.#transport.clock;
    const deadline = clock.now() + timeoutMs;
    for (;;) {
      const reload = await this.reload(id);
      if (reload.status !== 'in_progress') return reload;
      const remaining = deadline - clock.now();
      if (remaining <= 0) {
        const path = apiPath`/services/haproxy/reloads/${id}`;
        throw new DataplaneTimeout(`Data Plane API ${this.endpoint}: reload ${id} still in progress after ${timeoutMs} ms`, {
          endpoint: this.endpoint,
          method: 'GET',
          path,
          reloadId: id,
          timeoutMs,
        });
      }
      await clock.sleep(Math.min(pollMs, remaining), options.signal);
    }
  }

  // --- storage ------------------------------------------------------------

  async listStorage(kind: StorageKind): Promise<StorageFile[]> {
    return this.#transport.jsonArray<StorageFile>({ method: 'GET', path: apiPath`/services/haproxy/storage/${kind}` });
  }

  /** The content of a map or general file. Certificates are described, never given back: see storageCertificate. */
  async getStorageFile(kind: Exclude<StorageKind, 'ssl_certificates'>, name: string): Promise<string> {
    const answer = await this.#transport.request({ method: 'GET', path: apiPath`/services/haproxy/storage/${kind}/${name}`, accept: '*/*' });
    return answer.text;
  }

  /** What the API says of a stored certificate: metadata (serial, dates, names, size), not the PEM. */
  async storageCertificate(name: string): Promise<StoredCertificate> {
    const call: Call = { method: 'GET', path: apiPath`/services/haproxy/storage/ssl_certificates/${name}` };
    const value = await this.#transport.json(call);
    if (!isObject(value) || typeof value['storage_name'] !== 'string') throw this.#transport.protocolError(call, 'certificate without "storage_name"');
    return value as unknown as StoredCertificate;
  }

  /** Uploads a new file (multipart, field `file_upload`, filename = name); DPAPI may rename it, see `storageName`. */
  async createStorageFile(kind: StorageKind, name: string, content: string | Uint8Array, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const upload = multipartFile('file_upload', name, content);
    const answer = await this.#transport.request({
      method: 'POST',
      path: apiPath`/services/haproxy/storage/${kind}`,
      query: storageQuery(options),
      body: upload.body,
      contentType: upload.contentType,
    });
    return storageResult(answer);
  }

  /** Replaces a file: text/plain for maps and certificates, multipart for general files (as DPAPI takes them). */
  async replaceStorageFile(kind: StorageKind, name: string, content: string | Uint8Array, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const path = apiPath`/services/haproxy/storage/${kind}/${name}`;
    const query = storageQuery(options);
    let call: Call;
    if (kind === 'general') {
      const upload = multipartFile('file_upload', name, content);
      call = { method: 'PUT', path, query, body: upload.body, contentType: upload.contentType };
    } else {
      call = { method: 'PUT', path, query, body: typeof content === 'string' ? content : Buffer.from(content), contentType: 'text/plain' };
    }
    return storageResult(await this.#transport.request(call));
  }

  async deleteStorageFile(kind: StorageKind, name: string, options: StorageWriteOptions = {}): Promise<StorageWriteResult> {
    const answer = await this.#transport.request({
      method: 'DELETE',
      path: apiPath`/services/haproxy/storage/${kind}/${name}`,
      query: storageQuery(options),
    });
    return storageResult(answer);
  }

  // --- runtime servers ----------------------------------------------------

  async runtimeServers(backend: string): Promise<RuntimeServer[]> {
    return this.#transport.jsonArray<RuntimeServer>({ method: 'GET', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers` });
  }

  async runtimeServer(backend: string, name: string): Promise<RuntimeServer> {
    return (await this.#transport.json({ method: 'GET', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}` })) as RuntimeServer;
  }

  async addRuntimeServer(backend: string, server: RuntimeAddServer): Promise<RuntimeAddServer> {
    return (await this.#transport.json({
      method: 'POST',
      path: apiPath`/services/haproxy/runtime/backends/${backend}/servers`,
      body: JSON.stringify(server),
      contentType: JSON_TYPE,
    })) as RuntimeAddServer;
  }

  async updateRuntimeServer(backend: string, name: string, update: RuntimeServerUpdate): Promise<RuntimeServer> {
    return (await this.#transport.json({
      method: 'PUT',
      path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}`,
      body: JSON.stringify(update),
      contentType: JSON_TYPE,
    })) as RuntimeServer;
  }

  async deleteRuntimeServer(backend: string, name: string): Promise<void> {
    await this.#transport.request({ method: 'DELETE', path: apiPath`/services/haproxy/runtime/backends/${backend}/servers/${name}` });
  }

  // --- runtime certificates (DPAPI 3.2+) -----------------------------------

  /** The certificates HAProxy has loaded, named as it names them (the path the configuration wrote). */
  async runtimeCertificates(): Promise<RuntimeCertificate[]> {
    return this.#transport.jsonArray<RuntimeCertificate>({ method: 'GET', path: '/services/haproxy/runtime/ssl_certs' });
  }

  /** Replaces a loaded certificate in the running HAProxy (`set ssl cert` + `commit ssl cert`): no reload, no file written. */
  async replaceRuntimeCertificate(name: string, pem: string): Promise<void> {
    const upload = multipartFile('file_upload', name.split('/').pop() ?? name, pem);
    await this.#transport.request({
      method: 'PUT',
      path: apiPath`/services/haproxy/runtime/ssl_certs/${name}`,
      body: upload.body,
      contentType: upload.contentType,
    });
  }

  // --- runtime maps -------------------------------------------------------

  /** Maps of the running HAProxy; only those under DPAPI's maps_dir unless `includeUnmanaged`. */
  async runtimeMaps(options: { readonly includeUnmanaged?: boolean } = {}): Promise<RuntimeMap[]> {
    return this.#transport.jsonArray<RuntimeMap>({
      method: 'GET',
      path: '/services/haproxy/runtime/maps',
      query: { include_unmanaged: options.includeUnmanaged },
    });
  }

  /**
   * `map` is a storage name (`host.map`), which the API resolves to
   * `<maps_dir>/host.map`; it travels as one encoded segment.
   */
  async mapEntries(map: string): Promise<MapEntry[]> {
    return this.#transport.jsonArray<MapEntry>({ method: 'GET', path: apiPath`/services/haproxy/runtime/maps/${map}/entries` });
  }

  /** Adds an entry; an existing key is a 409 `conflict` (use setMapEntry). */
  async addMapEntry(map: string, key: string, value: string, options: MapWriteOptions = {}): Promise<MapEntry> {
    return (await this.#transport.json({
      method: 'POST',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries`,
      query: { force_sync: options.forceSync },
      body: JSON.stringify({ key, value }),
      contentType: JSON_TYPE,
    })) as MapEntry;
  }

  /** Changes the value of an existing key; a missing key is NotFound. */
  async setMapEntry(map: string, key: string, value: string, options: MapWriteOptions = {}): Promise<MapEntry> {
    return (await this.#transport.json({
      method: 'PUT',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries/${key}`,
      query: { force_sync: options.forceSync },
      body: JSON.stringify({ value }),
      contentType: JSON_TYPE,
    })) as MapEntry;
  }

  async deleteMapEntry(map: string, key: string, options: MapWriteOptions = {}): Promise<void> {
    await this.#transport.request({
      method: 'DELETE',
      path: apiPath`/services/haproxy/runtime/maps/${map}/entries/${key}`,
      query: { force_sync: options.forceSync },
    });
  }

  // --- redaction ----------------------------------------------------------

  toString(): string {
    return `DataplaneClient(${this.endpoint})`;
  }

  toJSON(): Record<string, unknown> {
    return this.#transport.toJSON();
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `DataplaneClient ${inspect(this.toJSON(), options)}`;
  }
}

function storageQuery(options: StorageWriteOptions): Record<string, QueryValue> {
  return { skip_reload: options.skipReload, force_reload: options.forceReload };
}

function storageResult(answer: Answer): StorageWriteResult {
  let body: unknown;
  try {
    body = answer.text === '' ? undefined : JSON.parse(answer.text);
  } catch {
    // PUT answers may carry the file itself, not a description of it.
  }
  const field = (name: string): string | undefined => (isObject(body) && typeof body[name] === 'string' ? body[name] : undefined);
  return { status: answer.status, reloadId: reloadIdHeader(answer.headers), storageName: field('storage_name'), file: field('file') };
}

function fileVersion(text: string): number | undefined {
  const match = /^# _version=(\d+)\s*$/m.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
