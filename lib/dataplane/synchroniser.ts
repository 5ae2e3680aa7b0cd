import { planDeployment } from '../haproxy/plan.ts';
import type { Plan, RuntimeOperation } from '../haproxy/plan-types.ts';
import { errorMessage } from '../error-message.ts';
import type { DeployReason, DeployResult, RenderedFiles } from '../pipeline/model.ts';
import type { DataplaneClient } from './client.ts';
import { fetchDeployedState, storageGroups, type DeployedState } from './deployed-state.ts';
import { DataplaneError, VersionConflict } from './errors.ts';
import type { Planner } from './shared-planner.ts';

export interface SynchroniserOptions {
  readonly client: DataplaneClient;
  /** Version conflicts (another writer) re-read and retry this many times. */
  readonly maxConflictRetries?: number;
  /** How long a reload may take to be reported done. */
  readonly reloadTimeoutMs?: number;
  readonly reloadPollMs?: number;
  /** Default planDeployment; a fleet shares one sharedPlanner, so that endpoints in step plan once. */
  readonly plan?: Planner;
}

/** Per-endpoint facts kept for metrics and the debug endpoint. */
export interface EndpointStatus {
  readonly deployedHash: string | undefined;
  readonly version: number | undefined;
  readonly lastMode: DeployResult['mode'] | undefined;
  readonly lastDurationMs: number | undefined;
  readonly lastError: string | undefined;
  readonly consecutiveFailures: number;
}

/** Runs a call whose failure of one kind means its work is already done; undefined then. */
async function ignoring<T>(kind: 'conflict' | 'not-found', call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DataplaneError && error.kind === kind) return undefined;
    throw error;
  }
}

/** A reload HAProxy refused: the endpoint keeps its previous configuration. */
export class ReloadFailed extends Error {
  override readonly name = 'ReloadFailed';
}

/**
 * Keeps one HAProxy behind a Data Plane API in step with the desired
 * configuration, with as few reloads as the Runtime API allows.
 *
 * The deployed state (configuration, files, version) is cached and trusted
 * while the version does not move; writes carry the version, so a change
 * by another writer comes back as a conflict, which re-reads the state and
 * plans again, never overwriting the newer change blindly.
 */
export class Synchroniser {
  readonly #client: DataplaneClient;
  readonly #options: SynchroniserOptions;
  readonly #plan: Planner;
  #deployed: DeployedState | undefined;
  #status: EndpointStatus = {
    deployedHash: undefined,
    version: undefined,
    lastMode: undefined,
    lastDurationMs: undefined,
    lastError: undefined,
    consecutiveFailures: 0,
  };

  constructor(options: SynchroniserOptions) {
    this.#client = options.client;
    this.#options = options;
    this.#plan = options.plan ?? planDeployment;
  }

  get status(): EndpointStatus {
    return this.#status;
  }

  async deploy(desired: RenderedFiles, hash: string, reason: DeployReason): Promise<DeployResult> {
    const started = performance.now();
    try {
      const result = await this.#deploy(desired, reason);
      this.#status = {
        deployedHash: hash,
        version: this.#deployed?.version,
        lastMode: result.mode,
        lastDurationMs: performance.now() - started,
        lastError: undefined,
        consecutiveFailures: 0,
      };
      return result;
    } catch (error) {
      this.#status = {
        ...this.#status,
        lastDurationMs: performance.now() - started,
        lastError: errorMessage(error),
        consecutiveFailures: this.#status.consecutiveFailures + 1,
      };
      throw error;
    }
  }

  async #deploy(desired: RenderedFiles, reason: DeployReason): Promise<DeployResult> {
    const retries = this.#options.maxConflictRetries ?? 3;
    for (let attempt = 0; ; attempt++) {
      // The cache holds while the endpoint's version is the one we wrote; a drift check trusts
      // no cache at all: it is there to find what changed behind our back.
      if (this.#deployed && reason !== 'drift' && (await this.#client.configurationVersion()) !== this.#deployed.version) {
        this.#deployed = undefined;
      }
      if (!this.#deployed || reason === 'drift') this.#deployed = await fetchDeployedState(this.#client);
      const deployed = this.#deployed;
      const plan = this.#plan(deployed.files, desired);
      try {
        return await this.#apply(plan, deployed, desired);
      } catch (error) {
        if (!(error instanceof VersionConflict) || attempt >= retries) {
          // After a failure the endpoint's state is unknown: read it again next time.
          this.#deployed = undefined;
          throw error;
        }
        this.#deployed = undefined;
      }
    }
  }

  async #apply(plan: Plan, deployed: DeployedState, desired: RenderedFiles): Promise<DeployResult> {
    if (plan.kind === 'empty') return { mode: 'unchanged', operations: 0 };
    if (plan.kind === 'reload') return this.#reload(plan.reason, deployed, desired);
    const actions: string[] = [];
    let operations = 0;
    for (const operation of plan.operations) {
      operations += await this.#runtime(operation, actions);
    }
    // Persist without reloading: files first (a later reload reads them), then the configuration,
    // whose X-Runtime-Actions carry the server updates the runtime endpoints of 3.2 cannot.
    await this.#uploadFiles(deployed.files, desired);
    const written = await this.#client.postRawConfiguration(desired.config, {
      version: deployed.version,
      skipReload: true,
      runtimeActions: actions,
    });
    this.#deployed = { files: desired, version: written.version ?? deployed.version + 1 };
    return { mode: 'runtime', operations: operations + actions.length };
  }

  /** Applies one runtime operation; server updates become runtime actions on the next raw write. */
  async #runtime(operation: RuntimeOperation, actions: string[]): Promise<number> {
    switch (operation.type) {
      case 'addServer': {
        const { server } = operation;
        // Operations are replayed when a conflict makes the plan run again: an existing server
        // with this name (address and port are in the name) was added by the earlier attempt.
        await ignoring('conflict', () =>
          this.#client.addRuntimeServer(operation.backend, {
            name: server.name,
            address: server.address,
            port: server.port,
            ...(server.weight !== undefined ? { weight: server.weight } : {}),
            ...(server.options.includes('check') ? { check: 'enabled' as const } : {}),
            // Created in maintenance, then made ready: on HAProxy 2.6 a server created
            // `enabled` is not put into the load-balancing tree and never takes traffic.
            maintenance: 'enabled',
          }),
        );
        if (!server.disabled) {
          // 2.6 runs no health checks on a server added at runtime until `enable health`, which
          // the Data Plane API has no call for: mark it up so it takes traffic now; the next
          // reload, from the persisted configuration, starts its checks.
          await this.#client.updateRuntimeServer(operation.backend, server.name, { admin_state: 'ready', operational_state: 'up' });
        }
        return 1;
      }
      case 'deleteServer':
        await ignoring('not-found', () => this.#client.deleteRuntimeServer(operation.backend, operation.server));
        return 1;
      case 'updateServer': {
        const { backend, server } = operation;
        if (operation.address !== undefined || operation.port !== undefined) {
          // SetServerAddr needs both; the plan carries only what changed, so look the other up.
          const current = await this.#client.runtimeServer(backend, server);
          actions.push(`SetServerAddr ${backend} ${server} ${operation.address ?? current.address} ${operation.port ?? current.port}`);
        }
        if (operation.weight !== undefined) actions.push(`SetServerWeight ${backend} ${server} ${operation.weight}`);
        if (operation.disabled !== undefined) actions.push(`SetServerState ${backend} ${server} ${operation.disabled ? 'maint' : 'ready'}`);
        return 0;
      }
      case 'updateMap': {
        const map = await this.#runtimeMapId(operation.map);
        for (const key of operation.removed) await ignoring('not-found', () => this.#client.deleteMapEntry(map, key));
        for (const [key, value] of operation.changed) await this.#client.setMapEntry(map, key, value);
        for (const [key, value] of operation.added) {
          // Already there from an earlier attempt of this plan: make sure of its value.
          const added = await ignoring('conflict', () => this.#client.addMapEntry(map, key, value));
          if (added === undefined) await this.#client.setMapEntry(map, key, value);
        }
        return operation.removed.length + operation.changed.length + operation.added.length;
      }
      case 'updateCertificate': {
        const written = await this.#client.replaceStorageFile('ssl_certificates', operation.certificate, operation.pem, { skipReload: true });
        if (written.reloadId) await this.#waitForReload(written.reloadId);
        return 1;
      }
    }
  }

  /**
   * The Data Plane API finds a runtime map by its file under maps_dir; our
   * configuration names maps relative to its base directory, which only the
   * `#<id>` form reaches, so the id is looked up by the file name.
   */
  async #runtimeMapId(file: string): Promise<string> {
    const maps = await this.#client.runtimeMaps({ includeUnmanaged: true });
    const found = maps.find((map) => map.file === file || map.file.endsWith(`/${file}`));
    if (!found?.id) throw new Error(`map ${file} is not loaded by HAProxy on ${this.#client.endpoint}`);
    return `#${found.id}`;
  }

  /** Uploads new and changed files without a reload. */
  async #uploadFiles(deployed: RenderedFiles, desired: RenderedFiles): Promise<number> {
    let uploads = 0;
    for (const { kind, group } of storageGroups) {
      for (const [name, content] of Object.entries(desired[group])) {
        const current = deployed[group][name];
        if (current === content) continue;
        if (current === undefined) await this.#client.createStorageFile(kind, name, content, { skipReload: true });
        else await this.#client.replaceStorageFile(kind, name, content, { skipReload: true });
        uploads++;
      }
    }
    return uploads;
  }

  async #reload(reason: string, deployed: DeployedState, desired: RenderedFiles): Promise<DeployResult> {
    // New and changed files first, without reload: the new configuration refers to them.
    await this.#uploadFiles(deployed.files, desired);
    const written = await this.#client.postRawConfiguration(desired.config, { version: deployed.version });
    if (written.reloadId) await this.#waitForReload(written.reloadId);
    // The desired object itself, shared with the fleet's other endpoints: the shared planner knows it at once.
    this.#deployed = { files: desired, version: written.version ?? deployed.version + 1 };
    // Files the new configuration no longer uses go last, once nothing refers to them.
    for (const { kind, group } of storageGroups) {
      for (const name of Object.keys(deployed.files[group])) {
        if (!(name in desired[group])) await this.#client.deleteStorageFile(kind, name, { skipReload: true });
      }
    }
    return { mode: 'reload', reloadReason: reason, ...(written.reloadId ? { reloadId: written.reloadId } : {}), operations: 0 };
  }

  async #waitForReload(id: string): Promise<void> {
    const status = await this.#client.waitForReload(id, {
      timeoutMs: this.#options.reloadTimeoutMs ?? 60_000,
      pollMs: this.#options.reloadPollMs ?? 200,
    });
    if (status.status === 'failed') {
      throw new ReloadFailed(`reload ${id} failed on ${this.#client.endpoint}: ${status.response.trim()}`);
    }
  }
}

