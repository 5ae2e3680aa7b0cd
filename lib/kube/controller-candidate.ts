import { resolveTemplateSources, type TemplateSource } from '../config/template-sources.ts';
import type { KubeObject } from '../pipeline/model.ts';

/** The controller's own inputs from the API: its configuration text and the Data Plane API credentials. */
export interface ControllerCandidate {
  /** The `config.yaml` key of the controller ConfigMap; undefined when that cannot be read. */
  readonly text: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Why the ConfigMap or Secret cannot be used, naming the object and key. */
  readonly problems: readonly string[];
  /** Templates the configuration takes from other ConfigMaps and Secrets (all in the controller's namespace). */
  readonly sources: readonly TemplateSource[];
}

export const CONFIG_KEY = 'config.yaml';
export const USERNAME_KEY = 'dataplane_username';
export const PASSWORD_KEY = 'dataplane_password';

function configMapValue(configMap: KubeObject, key: string): string | undefined {
  const value = (configMap['data'] as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'string' ? value : undefined;
}

function secretValue(secret: KubeObject, key: string): string | undefined {
  const data = secret['data'] as Record<string, unknown> | undefined;
  const encoded = data?.[key];
  if (typeof encoded === 'string') return Buffer.from(encoded, 'base64').toString('utf8');
  const plain = (secret['stringData'] as Record<string, unknown> | undefined)?.[key];
  return typeof plain === 'string' ? plain : undefined;
}

/**
 * Assembles the candidate from the ConfigMaps and Secrets of the
 * controller's namespace (by name) as they are now: the configuration, the
 * templates it takes from other keys, and the credentials. Every missing
 * piece is a problem named after its object and key, so a rejection tells
 * the user exactly what to fix.
 */
export function controllerCandidate(configMapName: string, secretName: string, configMaps: ReadonlyMap<string, KubeObject>, secrets: ReadonlyMap<string, KubeObject>): ControllerCandidate {
  const problems: string[] = [];
  let text: string | undefined;
  let sources: readonly TemplateSource[] = [];
  const configMap = configMaps.get(configMapName);
  const secret = secrets.get(secretName);
  if (configMap === undefined) problems.push(`ConfigMap ${configMapName} not found`);
  else {
    const value = configMapValue(configMap, CONFIG_KEY);
    if (value === undefined) problems.push(`ConfigMap ${configMapName} has no key ${CONFIG_KEY}`);
    else {
      const resolved = resolveTemplateSources(value, (source) => {
        const holder = (source.kind === 'ConfigMap' ? configMaps : secrets).get(source.name);
        if (holder === undefined) return undefined;
        return source.kind === 'ConfigMap' ? configMapValue(holder, source.key) : secretValue(holder, source.key);
      });
      text = resolved.text;
      sources = resolved.sources;
      problems.push(...resolved.errors.map((error) => `ConfigMap ${configMapName}: ${error}`));
    }
  }
  let username: string | undefined;
  let password: string | undefined;
  if (secret === undefined) problems.push(`Secret ${secretName} not found`);
  else {
    username = secretValue(secret, USERNAME_KEY);
    password = secretValue(secret, PASSWORD_KEY);
    for (const [key, value] of [
      [USERNAME_KEY, username],
      [PASSWORD_KEY, password],
    ] as const) {
      if (value === undefined || value === '') problems.push(`Secret ${secretName} has no key ${key}`);
    }
  }
  return { text, username, password, problems, sources };
}

export function sameCandidate(a: ControllerCandidate, b: ControllerCandidate): boolean {
  const sources = (c: ControllerCandidate) => c.sources.map((s) => `${s.kind}/${s.name}/${s.key}`).join('\n');
  return a.text === b.text && a.username === b.username && a.password === b.password && a.problems.join('\n') === b.problems.join('\n') && sources(a) === sources(b);
}
