/**
 * A HAProxy behind a Data Plane API v3 as a deploy target, following
 * docs/dataplane-api-contract.md. Writes carry the configuration version, so
 * another writer comes back as StateMoved and never gets overwritten
 * blindly; the text posted last is remembered with the checksum the API gave
 * for what it stored, which is how a later read recognises it (§3a).
 *
 * Runtime: servers through the runtime server endpoints (added in
 * maintenance, then made ready) and X-Runtime-Actions on the persisting
 * write (weight, address, state); map entries by storage name
 * (dataplane-maps.ts); certificates through the runtime certificate
 * endpoints, by the name HAProxy knows them by (§7a). Then the changed files
 * go to storage and the configuration is written, all with skip_reload.
 */
import { posix } from 'node:path';
import { errorMessage } from '../error-message.ts';
import type { DataplaneClient } from '../dataplane/client.ts';
import { DataplaneError, ignoring, VersionConflict } from '../dataplane/errors.ts';
import type { RuntimeCertificate } from '../dataplane/types.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { RuntimeOperation } from '../haproxy/plan-types.ts';
import type { RenderedFiles } from '../pipeline/model.ts';
import { mapRefusal, updateMapEntries } from './dataplane-maps.ts';
import { runtimeServerFields } from './runtime-server-fields.ts';
import { readDataplaneState, storageGroups, type DataplaneState, type Posted } from './dataplane-state.ts';
import { StateMoved, type DeployTarget } from './target.ts';

export interface DataplaneTargetOptions {
  readonly client: DataplaneClient;
  /** How long a reload may take to be reported done. Default 60 s. */
  readonly reloadTimeoutMs?: number;
  /** Default 200 ms. */
  readonly reloadPollMs?: number;
  /** What the reload timeout and polling are measured on; real time by default. */
  readonly clock?: Clock;
  /** Where a server left in maintenance instead of deleted is told; nowhere by default. */
  readonly log?: (message: string) => void;
}

/** HAProxy's refusal to delete a server that still has connections. */
const STILL_CONNECTED = /still has connections/;

/** How often a server HAProxy will not delete yet is asked again, and how long apart. */
const DELETE_ATTEMPTS = 10;
const DELETE_RETRY_MS = 50;

/** A reload HAProxy refused: the endpoint keeps its previous configuration. */
export class ReloadFailed extends Error {
  override readonly name = 'ReloadFailed';
}

/** A version conflict as the convergence algorithm knows it: read again, plan again. */
async function versioned<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof VersionConflict) throw new StateMoved(error.message, { cause: error });
    throw error;
  }
}

export class DataplaneTarget implements DeployTarget<DataplaneState> {
  readonly name: string;
  readonly #client: DataplaneClient;
  readonly #options: DataplaneTargetOptions;
  #posted: Posted | undefined;

  constructor(options: DataplaneTargetOptions) {
    this.#client = options.client;
    this.#options = options;
    this.name = options.client.endpoint;
  }

  read(known: readonly RenderedFiles[]): Promise<DataplaneState> {
    return readDataplaneState(this.#client, known, this.#posted);
  }

  async isCurrent(state: DataplaneState): Promise<boolean> {
    return (await this.#client.configurationVersion()) === state.version;
  }

  refusal(operation: RuntimeOperation, state: DataplaneState): string | undefined {
    return operation.type === 'updateMap' ? mapRefusal(operation, state.mapsDir) : undefined;
  }

  /**
   * Persists with the operations, asked to or not: server updates ride as runtime actions on the write
   * that stores the configuration, so applying them and writing the files are one step here (target.ts).
   */
  async runtime(state: DataplaneState, desired: RenderedFiles, operations: readonly RuntimeOperation[], _persist: boolean): Promise<{ state: DataplaneState; operations: number }> {
    const actions: string[] = [];
    const certificates = new CertificateNames(this.#client);
    let count = 0;
    for (const operation of operations) count += await this.#apply(operation, actions, certificates);
    // Persist without reloading: files first (a later reload reads them), then the configuration,
    // whose X-Runtime-Actions carry the server updates the runtime endpoints of 3.2 cannot.
    const mapsDir = await this.#uploadFiles(state.files, desired);
    const written = await versioned(() => this.#client.postRawConfiguration(desired.config, { version: state.version, skipReload: true, runtimeActions: actions }));
    return { state: this.#written({ ...state, mapsDir: state.mapsDir ?? mapsDir }, desired, written), operations: count + actions.length };
  }

  /** Never called with files that lag: runtime() always persists. */
  persist(state: DataplaneState): Promise<DataplaneState> {
    return Promise.resolve(state);
  }

  async reload(state: DataplaneState | undefined, desired: RenderedFiles, _reason: string): Promise<{ state: DataplaneState; reloadId?: string }> {
    const current = state ?? (await this.read([desired]));
    // New and changed files first, without reload: the new configuration refers to them.
    const mapsDir = await this.#uploadFiles(current.files, desired);
    const written = await versioned(() => this.#client.postRawConfiguration(desired.config, { version: current.version }));
    if (written.reloadId !== undefined) await this.#waitForReload(written.reloadId);
    const next = this.#written({ ...current, mapsDir: current.mapsDir ?? mapsDir }, desired, written);
    // Files the new configuration no longer uses go last, once nothing refers to them.
    for (const { kind, group } of storageGroups) {
      for (const name of Object.keys(current.files[group])) {
        if (!Object.hasOwn(desired[group], name)) await this.#client.deleteStorageFile(kind, name, { skipReload: true });
      }
    }
    return { state: next, ...(written.reloadId === undefined ? {} : { reloadId: written.reloadId }) };
  }

  /** The state after a write: the desired files, the new version, the stored text's checksum remembered. */
  #written(before: DataplaneState, desired: RenderedFiles, written: { readonly version: number | undefined; readonly checksum: string | undefined }): DataplaneState {
    this.#posted = written.checksum === undefined ? undefined : { text: desired.config, checksum: written.checksum };
    return { files: desired, version: written.version ?? before.version + 1, mapsDir: before.mapsDir };
  }

  /** Applies one runtime operation; server updates become runtime actions on the persisting write. */
  async #apply(operation: RuntimeOperation, actions: string[], certificates: CertificateNames): Promise<number> {
    const client = this.#client;
    switch (operation.type) {
      case 'addServer': {
        const { server } = operation;
        // Replayed after a conflict: an existing server of this name was added by the earlier attempt.
        await ignoring('conflict', () =>
          client.addRuntimeServer(operation.backend, {
            name: server.name,
            address: server.address,
            // Port 0 (the client's destination port) is no port at all.
            ...(server.port === 0 ? {} : { port: server.port }),
            ...(server.weight !== undefined ? { weight: server.weight } : {}),
            ...runtimeServerFields(server),
            // Created in maintenance, then made ready: on HAProxy 2.6 a server created
            // `enabled` is not put into the load-balancing tree and never takes traffic.
            maintenance: 'enabled',
          }),
        );
        if (!server.disabled) {
          // 2.6 runs no health checks on a server added at runtime until `enable health`, which
          // the Data Plane API has no call for: mark it up so it takes traffic now; the next
          // reload, from the persisted configuration, starts its checks.
          await client.updateRuntimeServer(operation.backend, server.name, { admin_state: 'ready', operational_state: 'up' });
        }
        return 1;
      }
      case 'deleteServer':
        await this.#deleteServer(operation.backend, operation.server);
        return 1;
      case 'updateServer': {
        const { backend, server } = operation;
        if (operation.address !== undefined || operation.port !== undefined) {
          // SetServerAddr takes both; the plan carries only what changed, so the other is looked up.
          const current = operation.address === undefined || operation.port === undefined ? await client.runtimeServer(backend, server) : undefined;
          const address = operation.address ?? current?.address;
          const port = operation.port ?? current?.port ?? 0;
          if (address === undefined) throw new Error(`runtime server ${backend}/${server} has no address on ${this.name}`);
          // Port 0 leaves the port as it is (client-native sends no port then).
          actions.push(`SetServerAddr ${backend} ${server} ${address} ${port}`);
        }
        if (operation.weight !== undefined) actions.push(`SetServerWeight ${backend} ${server} ${operation.weight}`);
        if (operation.disabled !== undefined) actions.push(`SetServerState ${backend} ${server} ${operation.disabled ? 'maint' : 'ready'}`);
        return 0;
      }
      case 'updateMap':
        return updateMapEntries(client, operation);
      case 'updateCertificate':
        await client.replaceRuntimeCertificate(await certificates.of(operation.certificate), withoutEmptyLines(operation.pem));
        return 1;
    }
  }

  /** Uploads new and changed files without a reload; the API's maps directory when a new map's answer names it. */
  async #uploadFiles(deployed: RenderedFiles, desired: RenderedFiles): Promise<string | undefined> {
    let mapsDir: string | undefined;
    for (const { kind, group } of storageGroups) {
      for (const [name, content] of Object.entries(desired[group])) {
        const current = deployed[group][name];
        if (current === content) continue;
        if (current !== undefined) {
          await this.#client.replaceStorageFile(kind, name, content, { skipReload: true });
          continue;
        }
        const created = await this.#client.createStorageFile(kind, name, content, { skipReload: true });
        if (kind === 'maps' && created.file !== undefined) mapsDir ??= posix.dirname(created.file);
      }
    }
    return mapsDir;
  }

  /**
   * HAProxy refuses `del server` while the server has a connection, an idle
   * one included (src/server.c srv_check_for_deletion), and DPAPI answers 500
   * having put it in maintenance first (handlers/runtime/servers/servers.go
   * DeleteRuntimeServer). A server in maintenance loses its idle connections
   * soon, so it is asked again a few times; past that it stays in
   * maintenance, taking no traffic, until the next reload drops it.
   */
  async #deleteServer(backend: string, server: string): Promise<void> {
    const clock = this.#options.clock ?? systemClock;
    let refusal = '';
    for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt++) {
      try {
        await ignoring('not-found', () => this.#client.deleteRuntimeServer(backend, server));
        return;
      } catch (error) {
        if (!(error instanceof DataplaneError) || !STILL_CONNECTED.test(error.serverMessage ?? '')) throw error;
        refusal = error.serverMessage ?? '';
      }
      await clock.sleep(DELETE_RETRY_MS);
    }
    this.#options.log?.(`${this.name}: runtime server ${backend}/${server} left in maintenance, not deleted: ${refusal}`);
  }

  async #waitForReload(id: string): Promise<void> {
    const status = await this.#client.waitForReload(id, {
      timeoutMs: this.#options.reloadTimeoutMs ?? 60_000,
      pollMs: this.#options.reloadPollMs ?? 200,
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
    });
    if (status.status === 'failed') {
      throw new ReloadFailed(`reload ${id} failed on ${this.name}: ${status.response.trim()}`);
    }
  }
}

/** The names HAProxy knows its certificates by, asked once per deployment that rotates one. */
class CertificateNames {
  readonly #client: DataplaneClient;
  #loaded: Promise<RuntimeCertificate[]> | undefined;

  constructor(client: DataplaneClient) {
    this.#client = client;
  }

  /** The runtime name of a stored certificate: the path the configuration wrote, ending in its name. */
  async of(certificate: string): Promise<string> {
    this.#loaded ??= this.#client.runtimeCertificates().catch((error: unknown) => {
      const missing = error instanceof DataplaneError && error.kind === 'not-found';
      throw new Error(missing ? `the Data Plane API has no runtime certificate endpoints (they came in 3.2): ${errorMessage(error)}` : errorMessage(error));
    });
    const found = (await this.#loaded).find(({ storage_name: name }) => name === certificate || name.endsWith(`/${certificate}`));
    if (found === undefined) throw new Error(`certificate ${certificate} is not loaded by HAProxy on ${this.#client.endpoint}`);
    return found.storage_name;
  }
}

/** HAProxy ends a runtime payload at the first empty line; a PEM needs none. */
function withoutEmptyLines(pem: string): string {
  return `${pem
    .split('\n')
    .filter((line) => line.trim() !== '')
    .join('\n')}\n`;
}
