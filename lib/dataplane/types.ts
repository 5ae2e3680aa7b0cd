import type { Clock } from '../clock.ts';

/**
 * Request and response shapes of the Data Plane API v3 calls the client
 * makes. Field names are DPAPI's own (snake_case, and the odd `-` name) so
 * bodies go over the wire unchanged.
 */

export interface DataplaneInfo {
  readonly api: { readonly version: string; readonly build_date?: string };
  /** Filled only when DPAPI runs with `show_system_info`. */
  readonly system?: Readonly<Record<string, unknown>>;
}

export interface DataplaneHealth {
  /** `unknown` when DPAPI has no status command: not a proof HAProxy is down. */
  readonly haproxy: 'up' | 'down' | 'unknown';
}

export interface RawConfiguration {
  /** The file as stored, including DPAPI's `# _md5hash` / `# _version` header. */
  readonly text: string;
  readonly version: number;
  /** md5 of the file (`Configuration-Checksum`). */
  readonly checksum: string | undefined;
}

export interface RawConfigurationOptions {
  /** The version the change is based on; a stale one is a VersionConflict. */
  readonly version?: number;
  /** Neither check nor increment the version. */
  readonly skipVersion?: boolean;
  /** Write without reloading (201); `runtimeActions` then apply the change live. */
  readonly skipReload?: boolean;
  /** Only run `haproxy -c`: 202 and nothing written. */
  readonly onlyValidate?: boolean;
  /** Reload synchronously (201); a failed reload is a 400 `reload-failed`. */
  readonly forceReload?: boolean;
  /** `X-Runtime-Actions`, e.g. `SetServerWeight be srv 10`; executed after a `skipReload` write. */
  readonly runtimeActions?: readonly string[];
}

export interface RawConfigurationResult {
  /** 201 written without (or after a forced) reload, 202 reload scheduled or validation passed. */
  readonly status: number;
  /** Present when a reload was scheduled (202 without only_validate). */
  readonly reloadId: string | undefined;
  /** The configuration version after the call (`Configuration-Version`). */
  readonly version: number | undefined;
  /** The configuration as stored: DPAPI's parser writes it back, never byte-identical to what was posted. */
  readonly body: string;
  /** `Configuration-Checksum` of the stored configuration: what a later raw GET reports while nobody changed it. */
  readonly checksum: string | undefined;
}

export type ReloadState = 'failed' | 'in_progress' | 'succeeded';

export interface ReloadStatus {
  readonly id: string;
  readonly status: ReloadState;
  /** Reload command output or HAProxy startup log: what to report when it failed. */
  readonly response: string;
  readonly reload_timestamp?: number;
}

export interface WaitForReloadOptions {
  /** Default 60 s: DPAPI only reloads every `reload_delay` (5 s by default). */
  readonly timeoutMs?: number;
  /** Default 500 ms. */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
  /** What the timeout and the pauses between polls are measured on; the client's clock by default. */
  readonly clock?: Clock;
}

export type StorageKind = 'maps' | 'general' | 'ssl_certificates';

export interface StorageFile {
  /** The name to address the file with (sanitised by DPAPI, `.map` added for maps). */
  readonly storage_name: string;
  readonly file?: string;
  readonly description?: string;
  readonly size?: number;
  readonly [field: string]: unknown;
}

/**
 * What `GET storage/ssl_certificates/{name}` answers (client-native
 * storage/cert-info.go): metadata of the stored PEM, never the PEM.
 */
export interface StoredCertificate {
  readonly storage_name: string;
  readonly file?: string;
  readonly size?: number;
  /** The leaf certificate's serial number, in decimal. */
  readonly serial?: string;
  /** The latest notBefore and the earliest notAfter of the certificates in the file (RFC 3339). */
  readonly not_before?: string;
  readonly not_after?: string;
  readonly subject?: string;
  readonly issuers?: string;
  readonly domains?: string;
  readonly ip_addresses?: string;
  readonly [field: string]: unknown;
}

/** One entry of `GET runtime/ssl_certs`: a certificate HAProxy has loaded, by the name HAProxy knows it by. */
export interface RuntimeCertificate {
  readonly storage_name: string;
  readonly description?: string;
}

export interface StorageWriteOptions {
  readonly skipReload?: boolean;
  readonly forceReload?: boolean;
}

export interface StorageWriteResult {
  /** 201 created, 200/204 replaced or deleted without reload, 202 reload scheduled. */
  readonly status: number;
  readonly reloadId: string | undefined;
  /** The name DPAPI stored the file under, when the answer says (creation renames `a.b.pem` to `a_b.pem`). */
  readonly storageName: string | undefined;
  /** The stored file's path, when the answer says: `<maps_dir>/<name>` for a map. */
  readonly file: string | undefined;
}

export type AdminState = 'ready' | 'maint' | 'drain';
export type OperationalState = 'up' | 'down' | 'stopping';
export type Toggle = 'enabled' | 'disabled';

export interface RuntimeServer {
  readonly name: string;
  readonly id?: string;
  readonly address?: string;
  readonly port?: number | null;
  readonly admin_state?: AdminState;
  readonly operational_state?: OperationalState;
}

/** Body of `POST /runtime/backends/{backend}/servers` (`runtime_add_server`). */
export interface RuntimeAddServer {
  readonly name: string;
  readonly address: string;
  readonly port?: number;
  readonly weight?: number;
  readonly check?: Toggle;
  /** HAProxy 2.6 starts dynamic servers in maintenance unless this is `disabled`. */
  readonly maintenance?: Toggle;
  readonly maxconn?: number;
  readonly inter?: number;
  readonly ssl?: Toggle;
  readonly verify?: 'none' | 'required';
  readonly [field: string]: unknown;
}

/** Body of `PUT /runtime/backends/{backend}/servers/{name}`; weight/address/port need DPAPI 3.3.6+ (older ones ignore them). */
export interface RuntimeServerUpdate {
  readonly admin_state?: AdminState;
  readonly operational_state?: OperationalState;
  readonly weight?: number;
  readonly address?: string;
  readonly port?: number;
}

export interface RuntimeMap {
  readonly id?: string;
  readonly file: string;
  readonly description?: string;
  readonly storage_name?: string;
}

export interface MapEntry {
  readonly id?: string;
  readonly key: string;
  readonly value: string;
}

export interface MapWriteOptions {
  /** Also rewrite the map file from the runtime entries, so the change survives a reload. */
  readonly forceSync?: boolean;
}
