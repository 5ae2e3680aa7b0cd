import { join } from 'node:path';
import type { ControllerConfig } from '../config/types.ts';
import { LocalTarget } from '../haproxy/local-target.ts';
import type { Endpoint } from '../pipeline/model.ts';
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

/** A HAProxy on this machine, driven through its sockets, as the only endpoint. */
export async function localFleet(options: LocalFleetOptions): Promise<Fleet & { readonly target: LocalTarget; readonly attached: boolean }> {
  const target = new LocalTarget({ workDir: options.workDir, dirs: options.dirs, log: options.log });
  const attached = await target.attach();
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
    deploy: (_endpoint, files) => target.deploy(files),
    describe: () =>
      `HAProxy serves http://${options.bindAddress}:${options.httpPort}/ (status and stats on :${options.statusPort}), work dir ${options.workDir}`,
    stop: async ({ keepHaproxy = false } = {}) => {
      if (!keepHaproxy) await target.stop();
    },
  };
}
