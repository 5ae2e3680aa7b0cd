import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import type { ConfigAlert, RenderedFiles, RenderOrigins, ValidationVerdict } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { parseAlerts, underDirectory, type Relocate } from './alerts.ts';
import { checkConfig, haproxyBinary } from './check.ts';
import { tokenizeLine } from './config-parser.ts';
import { baseDirectory } from './directive-guard.ts';
import type { GuardedDirective } from '../config/guarded-directives.ts';

export interface ValidatorOptions {
  readonly allowDirectives: readonly GuardedDirective[];
  readonly dirs: Pick<DataplaneSettings, 'mapsDir' | 'certificatesDir' | 'generalDir'>;
  readonly binary?: string;
  /** Verdicts kept by content hash. */
  readonly cacheSize?: number;
  /** Where the private validation directories are made; the system temp dir (TMPDIR) at each validation by default. */
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
 * running HAProxy uses: every `default-path` of the global section (a later
 * one would otherwise move the base again) and every absolute path under the
 * base directory (a map the Data Plane API updates at runtime is named that
 * way). `originalLine` maps a line of the result back to the rendered
 * configuration (undefined for the line added here).
 */
function rebase(config: string, dir: string): { text: string; originalLine: (line: number) => number | undefined } {
  const directive = `  default-path origin ${dir}`;
  const base = baseDirectory(config);
  const under = base === undefined ? undefined : new RegExp(`(?<![\\w.~/-])${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/)`, 'g');
  const lines = config.split('\n').map((line) => (under === undefined ? line : line.replace(under, dir)));
  let section: string | undefined;
  let globalAt = -1;
  let replaced = false;
  for (let i = 0; i < lines.length; i++) {
    const [first] = tokenizeLine(lines[i]!).words;
    if (first === undefined) continue;
    if (!/^\s/.test(lines[i]!)) section = first;
    if (first === 'global' && globalAt < 0) globalAt = i;
    if (section === 'global' && first === 'default-path') {
      lines[i] = directive;
      replaced = true;
    }
  }
  if (replaced) return { text: lines.join('\n'), originalLine: (line) => line };
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

/** Every rendered file by its target name (`haproxy.cfg`, `maps/host.map`...). */
function targetNames(files: RenderedFiles, dirs: ValidatorOptions['dirs']): Set<string> {
  const names = new Set(['haproxy.cfg']);
  const group = (dir: string, entries: Readonly<Record<string, string>>) => {
    for (const name of Object.keys(entries)) names.add(`${dir}/${name}`);
  };
  group(dirs.mapsDir, files.maps);
  group(dirs.certificatesDir, files.certificates);
  group(dirs.generalDir, files.files);
  return names;
}

/**
 * Turns the alerts into messages that point back to the source: HAProxy's
 * message, the rendered line, the template line that produced it and the
 * objects whose values are on it.
 */
function explain(alerts: readonly ConfigAlert[], output: string, input: ValidationInput, clean: (text: string) => string): string {
  if (alerts.length === 0) return clean(output);
  const renderedLines = input.files.config.split('\n');
  return alerts
    .map((alert) => {
      const place = alert.locations.at(-1);
      if (!place) return alert.message;
      const origin = input.origins.get(place.file)?.[place.line - 1];
      const text = place.file === 'haproxy.cfg' ? renderedLines[place.line - 1] : undefined;
      const objects = origin && origin.objects.length > 0 ? `, values of ${origin.objects.join(', ')}` : '';
      return [
        `${place.file}:${place.line}: ${alert.detail}`,
        ...(text !== undefined ? [`  rendered: ${JSON.stringify(text.trim())}`] : []),
        ...(origin ? [`  from ${origin.template} line ${origin.line}${objects}`] : []),
      ].join('\n');
    })
    .join('\n');
}

/**
 * Validates rendered configurations: the real `haproxy -c` behind the
 * directive guard (see check.ts), on a copy in a private temporary
 * directory, one at a time, with verdicts cached by content hash. A
 * validation that could not run (no space or descriptors for the copy,
 * HAProxy missing or killed) is `unavailable`, never `invalid`, and is not
 * cached: the same content is checked again next time.
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
    const verdict = await this.#check(input).catch((error: unknown): ValidationVerdict => ({ status: 'unavailable', message: errorMessage(error) }));
    if (verdict.status === 'unavailable') return verdict;
    this.#cache.set(input.hash, verdict);
    const limit = this.#options.cacheSize ?? 64;
    for (const key of this.#cache.keys()) {
      if (this.#cache.size <= limit) break;
      this.#cache.delete(key);
    }
    return verdict;
  }

  async #check(input: ValidationInput): Promise<ValidationVerdict> {
    const dir = await mkdtemp(join(this.#options.tmpRoot ?? tmpdir(), 'haproxy-template-ic-validate-'));
    try {
      const { text, originalLine } = rebase(input.files.config, dir);
      const configFile = await writeRenderedFiles(dir, { ...input.files, config: text }, this.#options.dirs);
      const result = await checkConfig(configFile, this.#options.binary ?? haproxyBinary(), { allowDirectives: this.#options.allowDirectives });
      if (result.valid) return { status: 'valid' };
      if (result.unavailable !== undefined) return { status: 'unavailable', message: result.unavailable };
      const clean = (message: string) => message.replaceAll(`${dir}/`, '').replaceAll(dir, '<validation dir>');
      const targets = targetNames(input.files, this.#options.dirs);
      const inDir = underDirectory(dir, (target) => targets.has(target));
      const relocate: Relocate = (path, line) => {
        const where = inDir(path, line);
        return where?.file === 'haproxy.cfg' && where.line !== undefined ? { file: where.file, line: originalLine(where.line) } : where;
      };
      const alerts = parseAlerts(result.output, relocate, clean);
      return { status: 'invalid', message: explain(alerts, result.output, input, clean), alerts };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
