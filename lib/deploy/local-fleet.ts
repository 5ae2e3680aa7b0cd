import { join } from 'node:path';
import type { ControllerConfig } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import type { SupervisedMaster } from '../haproxy/master-supervisor.ts';
import { isAlive } from '../haproxy/processes.ts';
import type { Endpoint } from '../pipeline/model.ts';
import { Converger } from './converge.ts';
import type { Fleet } from './fleet.ts';
import { LocalTarget } from './local-target.ts';
import { sharedPlanner } from './shared-planner.ts';

export interface LocalFleetOptions {
  readonly workDir: string;
  readonly dirs: { readonly mapsDir: string; readonly certificatesDir: string; readonly generalDir: string };
  readonly bindAddress: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly statusPort: number;
  readonly log: (line: string) => void;
}

export interface LocalFleet extends Fleet {
  readonly target: LocalTarget;
  /** An HAProxy was running on the work directory already: the controller adopts it. */
  readonly attached: boolean;
  /** The master, for a supervisor: supervised once something was deployed, restarted with what was deployed last. */
  readonly master: SupervisedMaster;
}

/** A HAProxy on this machine, driven through its sockets, as the only endpoint. */
export async function localFleet(options: LocalFleetOptions): Promise<LocalFleet> {
  const target = new LocalTarget({ workDir: options.workDir, dirs: options.dirs, log: options.log });
  const plan = sharedPlanner();
  const converger = new Converger({ target, log: options.log, plan });
  const running = await target.master.probe();
  // The binary that serves is the one validating here: HTTP/3 exactly when it is built with QUIC.
  const http3 = await target.master.capabilities().then(
    (capabilities) => capabilities.quic,
    (error: unknown) => {
      options.log(`HTTP/3 off: ${errorMessage(error)}`);
      return false;
    },
  );
  /** Something was deployed: from then on HAProxy is supervised, and started again on what was deployed last. */
  let deployed = false;
  const endpoint: Endpoint = { id: 'local', url: `file://${options.workDir}` };
  return {
    target,
    attached: running !== undefined,
    endpoints: [endpoint],
    plan,
    prepare: (config: ControllerConfig): ControllerConfig => ({
      ...config,
      dataplane: { ...config.dataplane, baseDir: options.workDir, configFile: join(options.workDir, 'haproxy.cfg') },
      templateValues: {
        ...config.templateValues,
        bindAddress: options.bindAddress,
        httpPort: options.httpPort,
        httpsPort: options.httpsPort,
        statusPort: options.statusPort,
        runtimeSocket: target.statsSocket,
        http3,
      },
    }),
    deploy: async (_endpoint, files, hash, reason, confirmed) => {
      const result = await converger.deploy(files, hash, reason, confirmed);
      deployed = true;
      return result;
    },
    master: {
      pid: () => (deployed ? target.master.pidFromFile() : Promise.resolve(undefined)),
      isAlive,
      start: async () => {
        // Converging on what was deployed last finds no master and starts one (the master's own guard refuses a
        // second). Last as of this deploy's turn: a deploy under way when the master died has brought newer files.
        await converger.redeploy('drift');
        const pid = await target.master.pidFromFile();
        if (pid === undefined) throw new Error(`HAProxy started but ${join(options.workDir, 'haproxy.pid')} names no master`);
        return pid;
      },
      onExit: (listener) => target.master.onExit(listener),
    },
    describe: () => `HAProxy serves http://${options.bindAddress}:${options.httpPort}/ (status and stats on :${options.statusPort}), work dir ${options.workDir}`,
    stop: async ({ keepHaproxy = false } = {}) => {
      if (!keepHaproxy) await converger.exclusive(() => target.stop());
    },
  };
}
