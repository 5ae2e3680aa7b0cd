/** What the endpoint modules of one emulated instance share. */
import type { ConfigStore } from './config-store.ts';
import type { HAProxyProcess } from './haproxy-process.ts';
import type { PathView } from './pod.ts';
import type { ReleaseFeatures } from './release.ts';
import type { ReloadAgent } from './reload-agent.ts';
import type { RuntimeSocket } from './runtime-socket.ts';

export interface EmulatorDirs {
  /** The base directory: haproxy.cfg, maps/, ssl/, general/, the sockets. */
  readonly base: string;
  /** DPAPI's maps_dir. */
  readonly maps: string;
  /** DPAPI's ssl_certs_dir. */
  readonly ssl: string;
  /** DPAPI's general_storage_dir. */
  readonly general: string;
  /** DPAPI's transaction_dir: candidates are validated here, never beside the live file. */
  readonly transactions: string;
}

export interface EmulatorContext {
  readonly dirs: EmulatorDirs;
  readonly store: ConfigStore;
  readonly agent: ReloadAgent;
  readonly runtime: RuntimeSocket;
  readonly haproxy: HAProxyProcess;
  /** Paths as the client knows them: the pod's in pod mode (pod.ts), else the instance's own. */
  readonly paths: PathView;
  /** What the emulated release does differently (release.ts). */
  readonly release: ReleaseFeatures;
  /** DPAPI's status command is configured: /health answers up or down instead of unknown. */
  readonly statusCommand: boolean;
}
