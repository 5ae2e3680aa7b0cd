import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import { checkConfig, configurationToCheck, haproxyBinary } from '../haproxy/check.ts';
import type { GuardedDirective } from '../config/guarded-directives.ts';
import { readRefusal } from '../haproxy/refusal.ts';
import type { RenderOutput } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';

/**
 * The one place the webhook runs `haproxy -c`, on the small configuration
 * made for an object: rendered into a private temporary directory and
 * checked through the project's one guarded entry point (check.ts), so a
 * directive the configuration does not allow never reaches HAProxy
 * (`haproxy -c` itself runs Lua and reads files) and HAProxy runs with an
 * empty environment: no variable of the controller (credentials, tokens)
 * can be expanded into the configuration or quoted back in an error.
 */

export type CheckVerdict = { readonly valid: true } | { readonly valid: false; readonly message: string };

export interface SmallConfigurationOptions {
  readonly allowDirectives: readonly GuardedDirective[];
  readonly dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>;
  /** Default: HAPROXY_BIN, else `haproxy` from PATH. */
  readonly binary?: string;
  /** Where the private directories are made; the system temp dir by default. */
  readonly tmpRoot?: string;
}

/** Renders with `render` into a private directory and judges the result; throws only when no judgement could be made. */
export async function checkSmallConfiguration(render: (baseDir: string) => RenderOutput, options: SmallConfigurationOptions): Promise<CheckVerdict> {
  const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'haproxy-template-ic-webhook-'));
  try {
    const rendered = render(dir);
    const configFile = await writeRenderedFiles(dir, { ...rendered.files, config: configurationToCheck(rendered.files.config) }, options.dirs);
    const result = await checkConfig(configFile, options.binary ?? haproxyBinary(), { allowDirectives: options.allowDirectives });
    if (result.valid) return { valid: true };
    if (result.unavailable !== undefined) throw new Error(`haproxy -c could not judge the object's configuration: ${result.unavailable}`);
    return { valid: false, message: readRefusal({ output: result.output, dir, files: rendered.files, origins: rendered.origins, dirs: options.dirs }).message };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
