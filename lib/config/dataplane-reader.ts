import { posix } from 'node:path';
import type { PipelineSettings } from './pipeline-settings.ts';
import type { Path, Problems } from './problems.ts';
import { fields, withDefault, type Fields } from './readers.ts';
import { controllerConfigSchema } from './schema.ts';
import { fieldNames, readScalar, readSetting } from './setting-reader.ts';
import type { DataplaneSettings } from './types.ts';

/** `dataplane`: where HAProxy keeps its files and how the controller reaches and paces its Data Plane API. */

const schema = controllerConfigSchema.fields.dataplane;

export type DataplaneTimings = Pick<PipelineSettings, 'minDeploymentIntervalMs' | 'driftCheckIntervalMs' | 'deployTimeoutMs' | 'maxParallel'>;

export function readDataplane(problems: Problems, value: unknown, at: Path): { settings: DataplaneSettings; timings: DataplaneTimings } {
  const raw = (value === undefined ? undefined : fields(problems, value, at, fieldNames(schema))) ?? {};
  const { fields: settingOf } = schema;
  const within = (key: string): Path => [...at, key];
  const baseDir = readSetting(problems, settingOf.baseDir, raw.baseDir, within('baseDir'));
  const settings: DataplaneSettings = {
    port: readSetting(problems, settingOf.port, raw.port, within('port')),
    scheme: readSetting(problems, settingOf.scheme, raw.scheme, within('scheme')),
    baseDir,
    mapsDir: readSetting(problems, settingOf.mapsDir, raw.mapsDir, within('mapsDir')),
    certificatesDir: readSetting(problems, settingOf.certificatesDir, raw.certificatesDir, within('certificatesDir')),
    generalDir: readSetting(problems, settingOf.generalDir, raw.generalDir, within('generalDir')),
    // Follows baseDir unless given, so moving the base directory moves the configuration with it.
    configFile: withDefault(raw.configFile, within('configFile'), posix.join(baseDir, 'haproxy.cfg'), (v, p) => readScalar(problems, settingOf.configFile, v, p)),
  };
  checkDistinctDirectories(problems, settings, raw, at);
  const timings: DataplaneTimings = {
    minDeploymentIntervalMs: readSetting(problems, settingOf.minDeploymentInterval, raw.minDeploymentInterval, within('minDeploymentInterval')),
    driftCheckIntervalMs: readSetting(problems, settingOf.driftCheckInterval, raw.driftCheckInterval, within('driftCheckInterval')),
    deployTimeoutMs: readSetting(problems, settingOf.deployTimeout, raw.deployTimeout, within('deployTimeout')),
    maxParallel: readSetting(problems, settingOf.maxParallel, raw.maxParallel, within('maxParallel')),
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
