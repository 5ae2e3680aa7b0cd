import { posix } from 'node:path';
import { defaultPipelineSettings, type PipelineSettings } from './pipeline-settings.ts';
import { describe, type Path, type Problems } from './problems.ts';
import { fields, readDuration, readInteger, readMatching, readPositiveDuration, withDefault, type Fields, type Reader } from './readers.ts';
import { rules } from './rules.ts';
import type { DataplaneSettings } from './types.ts';

/** `dataplane`: where HAProxy keeps its files and how the controller reaches and paces its Data Plane API. */

const dataplaneFields = [
  'port',
  'scheme',
  'minDeploymentInterval',
  'driftCheckInterval',
  'deployTimeout',
  'maxParallel',
  'baseDir',
  'mapsDir',
  'certificatesDir',
  'generalDir',
  'configFile',
] as const;

export type DataplaneTimings = Pick<PipelineSettings, 'minDeploymentIntervalMs' | 'driftCheckIntervalMs' | 'deployTimeoutMs' | 'maxParallel'>;

export function readDataplane(problems: Problems, value: unknown, at: Path): { settings: DataplaneSettings; timings: DataplaneTimings } {
  const raw = (value === undefined ? undefined : fields(problems, value, at, dataplaneFields)) ?? {};
  const field = <T>(key: (typeof dataplaneFields)[number], fallback: T, read: Reader<T>): T => withDefault(raw[key], [...at, key], fallback, read);
  const directory = (key: 'mapsDir' | 'certificatesDir' | 'generalDir', fallback: string): string => field(key, fallback, (v, p) => readMatching(problems, v, p, rules.directory));
  const baseDir = field('baseDir', '/etc/haproxy', (v, p) => readMatching(problems, v, p, rules.absolutePath));
  const settings: DataplaneSettings = {
    port: field('port', 5555, (v, p) => readInteger(problems, v, p, 1, 65_535)),
    scheme: field('scheme', 'http', (v, p) => {
      if (v === 'http' || v === 'https') return v;
      problems.add(p, `must be http or https, got ${describe(v)}`);
      return undefined;
    }),
    baseDir,
    mapsDir: directory('mapsDir', 'maps'),
    certificatesDir: directory('certificatesDir', 'ssl'),
    generalDir: directory('generalDir', 'general'),
    // Follows baseDir unless given, so moving the base directory moves the configuration with it.
    configFile: field('configFile', posix.join(baseDir, 'haproxy.cfg'), (v, p) => readMatching(problems, v, p, rules.absolutePath)),
  };
  checkDistinctDirectories(problems, settings, raw, at);
  const defaults = defaultPipelineSettings;
  const timings: DataplaneTimings = {
    minDeploymentIntervalMs: field('minDeploymentInterval', defaults.minDeploymentIntervalMs, (v, p) => readDuration(problems, v, p)),
    driftCheckIntervalMs: field('driftCheckInterval', defaults.driftCheckIntervalMs, (v, p) => readPositiveDuration(problems, v, p)),
    deployTimeoutMs: field('deployTimeout', defaults.deployTimeoutMs, (v, p) => readPositiveDuration(problems, v, p)),
    maxParallel: field('maxParallel', defaults.maxParallel, (v, p) => readInteger(problems, v, p, 1)),
  };
  return { settings, timings };
}

/** Two storage kinds sharing a directory would overwrite each other's files. */
function checkDistinctDirectories(problems: Problems, settings: DataplaneSettings, raw: Fields<string>, at: Path): void {
  const keys = ['mapsDir', 'certificatesDir', 'generalDir'] as const;
  keys.forEach((key, i) => {
    const earlier = keys.slice(0, i).find((other) => settings[other] === settings[key]);
    if (earlier === undefined || !problems.clean([...at, key], [...at, earlier])) return;
    // Reported at the one the author wrote: a default can only clash with a given value.
    const [reported, other] = raw[key] === undefined ? [earlier, key] : [key, earlier];
    problems.add([...at, reported], `must differ from ${other} (both are ${JSON.stringify(settings[key])})`);
  });
}
