import { join } from 'node:path';
import type { ControllerConfig } from '../config/types.ts';
import { LocalTarget } from '../haproxy/local-target.ts';
import { pidFromFile } from '../haproxy/master-guard.ts';
import type { SupervisedMaster } from '../haproxy/master-supervisor.ts';
import { isAlive } from '../haproxy/processes.ts';
import type { Endpoint, RenderedFiles } from '../pipeline/model.ts';
import type { Fleet } from './fleet.ts';

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
  readonly attached: boolean;
  /** The master, for a supervisor: supervised once something was deployed, restarted with what was deployed last. */
  readonly master: SupervisedMaster;
}

/** A HAProxy on this machine, driven through its sockets, as the only endpoint. */
export async function localFleet(options: LocalFleetOptions): Promise<LocalFleet> {
  const target = new LocalTarget({ workDir: options.workDir, dirs: options.dirs, log: options.log });
  const attached = await target.attach();
  const pidFile = join(options.workDir, 'haproxy.pid');
  /** The files last deployed: what HAProxy serves, and starts with again after it died. */
  let served: RenderedFiles | undefined;
  const endpoint: Endpoint = { id: 'local', url: `file://${options.workDir}` };
  return {
    target,
    attached,
    endpoints: [endpoint],
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
      },
    }),
    deploy: async (_endpoint, files) => {
      const result = await target.deploy(files);
      served = files;
      return result;
    },
    master: {
      pid: () => (served === undefined ? Promise.resolve(undefined) : pidFromFile(pidFile)),
      isAlive,
      start: async () => {
        // A deployment of what it served starts HAProxy when it is not running (LocalTarget checks first).
        await target.deploy(served!);
        const pid = await pidFromFile(pidFile);
        if (pid === undefined) throw new Error(`HAProxy started but ${pidFile} names no master`);
        return pid;
      },
    },
    describe: () =>
      `HAProxy serves http://${options.bindAddress}:${options.httpPort}/ (status and stats on :${options.statusPort}), work dir ${options.workDir}`,
    stop: async ({ keepHaproxy = false } = {}) => {
      if (!keepHaproxy) await target.stop();
    },
  };
}
