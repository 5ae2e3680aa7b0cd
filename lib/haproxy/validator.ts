import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import type { RenderedFiles, RenderOrigins, ValidationVerdict } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { checkConfig, haproxyBinary } from './check.ts';
import { tokenizeLine } from './config-parser.ts';
import { baseDirectory, findGuardedDirectives } from './directive-guard.ts';
import { guardedDirectives, type GuardedDirective } from './guarded-directives.ts';

export interface ValidatorOptions {
  readonly allowDirectives: readonly GuardedDirective[];
  readonly dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>;
  readonly binary?: string;
  /** Verdicts kept by content hash. */
  readonly cacheSize?: number;
  /** Where the private validation directories are made; the system temp dir by default. */
  readonly tmpRoot?: string;
}

export interface ValidationInput {
  readonly hash: string;
  readonly files: RenderedFiles;
  readonly origins: RenderOrigins;
}

/**
 * Points the configuration's base directory at the validation directory,
 * so `haproxy -c` reads the candidate's maps and certificates, never those a
 * running HAProxy uses: `default-path origin` and every absolute path under
 * the base directory (a map the Data Plane API updates at runtime is named
 * that way). `originalLine` maps a line of the result back to the rendered
 * configuration (undefined for the line added here).
 */
function rebase(config: string, dir: string): { text: string; originalLine: (line: number) => number | undefined } {
  const directive = `  default-path origin ${dir}`;
  const base = baseDirectory(config);
  const under = base === undefined ? undefined : new RegExp(`(?<![\\w.~/-])${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/)`, 'g');
  const lines = config.split('\n').map((line) => (under === undefined ? line : line.replace(under, dir)));
  let section: string | undefined;
  let globalAt = -1;
  for (let i = 0; i < lines.length; i++) {
    const [first] = tokenizeLine(lines[i]!).words;
    if (first === undefined) continue;
    if (!/^\s/.test(lines[i]!)) section = first;
    if (first === 'global' && globalAt < 0) globalAt = i;
    if (section === 'global' && first === 'default-path') {
      lines[i] = directive;
      return { text: lines.join('\n'), originalLine: (line) => line };
    }
  }
  const added = globalAt + 1;
  if (globalAt < 0) lines.unshift('global', directive);
  else lines.splice(added, 0, directive);
  const inserted = globalAt < 0 ? 2 : 1;
  const firstShifted = globalAt < 0 ? 1 : added + 1;
  return {
    text: lines.join('\n'),
    originalLine: (line) => (line < firstShifted ? line : line - inserted < firstShifted ? undefined : line - inserted),
  };
}

/**
 * Turns `haproxy -c` output into messages that point back to the source:
 * HAProxy's message, the rendered line, the template line that produced it
 * and the objects whose values are on it.
 */
function explain(output: string, dir: string, input: ValidationInput, originalLine: (line: number) => number | undefined): string {
  const clean = (text: string) => text.replaceAll(`${dir}/`, '').replaceAll(dir, '<validation dir>');
  // The closing summary lines repeat what the located alerts already say.
  const alerts = output
    .split('\n')
    .filter((line) => line.includes('[ALERT]') && !/Error\(s\) found in configuration file|Fatal errors found in configuration/.test(line));
  if (alerts.length === 0) return clean(output);
  const renderedLines = input.files.config.split('\n');
  return alerts
    .map((alert) => {
      // 2.6 writes both "parsing [file:line] : msg" and "[file:line] : msg".
      const located = /\[([^\]\s]+):(\d+)\]\s*:?\s*(.*)$/.exec(alert);
      const message = clean(located?.[3] ?? alert.replace(/^.*?\]\s*(\(\d+\))?\s*:\s*/, ''));
      if (!located) return message;
      const file = clean(located[1]!);
      const line = file === 'haproxy.cfg' ? originalLine(Number(located[2])) : Number(located[2]);
      if (line === undefined) return `${file}: ${message}`;
      const origin = input.origins.get(file)?.[line - 1];
      const text = file === 'haproxy.cfg' ? renderedLines[line - 1] : undefined;
      const objects = origin && origin.objects.length > 0 ? `, values of ${origin.objects.join(', ')}` : '';
      return [
        `${file}:${line}: ${message}`,
        ...(text !== undefined ? [`  rendered: ${JSON.stringify(text.trim())}`] : []),
        ...(origin ? [`  from ${origin.template} line ${origin.line}${objects}`] : []),
      ].join('\n');
    })
    .join('\n');
}

/**
 * Validates rendered configurations: guarded directives first, then the
 * real `haproxy -c` on a copy in a private temporary directory, one at a
 * time, with verdicts cached by content hash.
 */
export class Validator {
  readonly #options: ValidatorOptions;
  readonly #cache = new Map<string, ValidationVerdict>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ValidatorOptions) {
    this.#options = options;
  }

  validate(input: ValidationInput): Promise<ValidationVerdict> {
    const run = this.#queue.then(() => this.#validate(input));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #validate(input: ValidationInput): Promise<ValidationVerdict> {
    const cached = this.#cache.get(input.hash);
    if (cached) {
      // Refresh its place: the most recently used verdicts stay.
      this.#cache.delete(input.hash);
      this.#cache.set(input.hash, cached);
      return cached;
    }
    const verdict = await this.#check(input);
    this.#cache.set(input.hash, verdict);
    const limit = this.#options.cacheSize ?? 64;
    for (const key of this.#cache.keys()) {
      if (this.#cache.size <= limit) break;
      this.#cache.delete(key);
    }
    return verdict;
  }

  async #check(input: ValidationInput): Promise<ValidationVerdict> {
    const allowed = new Set(this.#options.allowDirectives);
    const refused = findGuardedDirectives(input.files.config).filter((finding) => !allowed.has(finding.directive));
    if (refused.length > 0) {
      const lines = refused.map((finding) => {
        const origin = input.origins.get('haproxy.cfg')?.[finding.line - 1];
        const from = origin ? ` (from ${origin.template} line ${origin.line}${origin.objects.length ? `, values of ${origin.objects.join(', ')}` : ''})` : '';
        return `haproxy.cfg:${finding.line}: ${finding.directive} ${guardedDirectives[finding.directive]}: ${JSON.stringify(finding.text)}${from}; allowDirectives does not allow it`;
      });
      return { valid: false, message: lines.join('\n') };
    }
    const dir = await mkdtemp(join(this.#options.tmpRoot ?? tmpdir(), 'haproxy-template-ic-validate-'));
    try {
      const { text, originalLine } = rebase(input.files.config, dir);
      const configFile = await writeRenderedFiles(dir, { ...input.files, config: text }, this.#options.dirs);
      const result = await checkConfig(configFile, this.#options.binary ?? haproxyBinary());
      if (result.valid) return { valid: true };
      return { valid: false, message: explain(result.output, dir, input, originalLine) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
