import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import { haproxyBinary } from '../haproxy/check.ts';
import { findGuardedDirectives } from '../haproxy/directive-guard.ts';
import { guardedDirectives, type GuardedDirective } from '../haproxy/guarded-directives.ts';
import type { RenderOutput } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';

/**
 * The one place the webhook runs `haproxy -c`, on the small configuration
 * made for an object: rendered into a private temporary directory, refused
 * without running HAProxy when the directive guard finds a directive the
 * configuration does not allow (`haproxy -c` itself runs Lua and reads
 * files), and checked with an empty environment, so no variable of the
 * controller (credentials, tokens) can be expanded into the configuration
 * or quoted back in an error.
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

/** HAProxy runs without PATH, so its binary is found here, in this process's PATH. */
async function locate(binary: string): Promise<string> {
  const candidates = binary.includes('/') ? [binary] : (process.env['PATH'] ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, binary));
  for (const candidate of candidates) {
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  throw new Error(`${binary} not found: install Debian's haproxy package (apt-get install haproxy) or set HAPROXY_BIN`);
}

function runCheck(binary: string, configFile: string): Promise<{ readonly valid: boolean; readonly output: string }> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-c', '-f', configFile], { env: {}, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (!error) return resolve({ valid: true, output });
      const { code, signal } = error as { code?: unknown; signal?: unknown };
      if (signal) return reject(new Error(`haproxy -c was killed by ${String(signal)}`));
      if (typeof code !== 'number') return reject(error);
      // 2: valid, without a listener; 1: refused.
      resolve({ valid: code === 2, output });
    });
  });
}

/** HAProxy's alerts, with the temporary directory taken out and the template line and objects of each line it names. */
function explain(output: string, dir: string, rendered: RenderOutput): string {
  const clean = (text: string) => text.replaceAll(`${dir}/`, '').replaceAll(dir, '<check dir>');
  const alerts = output.split('\n').filter((line) => line.includes('[ALERT]') && !/Error\(s\) found in configuration file|Fatal errors found in configuration/.test(line));
  if (alerts.length === 0) return clean(output);
  return alerts
    .map((alert) => {
      const located = /\[([^\]\s]+):(\d+)\]\s*:?\s*(.*)$/.exec(alert);
      const message = clean(located?.[3] ?? alert.replace(/^.*?\]\s*(\(\d+\))?\s*:\s*/, ''));
      if (!located) return message;
      const file = clean(located[1]!);
      const origin = rendered.origins.get(file)?.[Number(located[2]) - 1];
      const from = origin ? ` (from ${origin.template} line ${origin.line}${origin.objects.length > 0 ? `, values of ${origin.objects.join(', ')}` : ''})` : '';
      return `${file}:${located[2]}: ${message}${from}`;
    })
    .join('; ');
}

/** Renders with `render` into a private directory and judges the result; throws only when no judgement could be made. */
export async function checkSmallConfiguration(render: (baseDir: string) => RenderOutput, options: SmallConfigurationOptions): Promise<CheckVerdict> {
  const dir = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'haproxy-template-ic-webhook-'));
  try {
    const rendered = render(dir);
    const allowed = new Set(options.allowDirectives);
    const refused = findGuardedDirectives(rendered.files.config).filter((finding) => !allowed.has(finding.directive));
    if (refused.length > 0) {
      const lines = refused.map((finding) => `haproxy.cfg:${finding.line}: ${finding.directive} ${guardedDirectives[finding.directive]}: ${JSON.stringify(finding.text)}; allowDirectives does not allow it`);
      return { valid: false, message: lines.join('; ') };
    }
    const configFile = await writeRenderedFiles(dir, rendered.files, options.dirs);
    const result = await runCheck(await locate(options.binary ?? haproxyBinary()), configFile);
    return result.valid ? { valid: true } : { valid: false, message: explain(result.output, dir, rendered) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
