import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import type { RenderedFiles, RenderOrigins, ValidationVerdict } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { checkConfig, configurationToCheck, haproxyBinary } from './check.ts';
import { parseConfig, tokenizeLine } from './config-parser.ts';
import { baseDirectory } from './directive-guard.ts';
import type { GuardedDirective } from '../config/guarded-directives.ts';
import { readRefusal } from './refusal.ts';

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
 * The first peer of the first peers section: the configuration is checked
 * as that HAProxy reads it. Without a local peer, HAProxy drops the section
 * with a warning and checks neither it nor the tables that name it as every
 * member of the fleet will (src/cfgparse.c, "Removing incomplete section").
 */
function firstPeer(config: string): string | undefined {
  const peers = parseConfig(config).sections.find((section) => section.keyword === 'peers');
  return peers?.lines.find((line) => line.words[0] === 'peer')?.words[1];
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
      const configFile = await writeRenderedFiles(dir, { ...input.files, config: configurationToCheck(text) }, this.#options.dirs);
      const localPeer = firstPeer(input.files.config);
      const result = await checkConfig(configFile, this.#options.binary ?? haproxyBinary(), {
        allowDirectives: this.#options.allowDirectives,
        ...(localPeer === undefined ? {} : { localPeer }),
      });
      if (result.valid) return { status: 'valid' };
      if (result.unavailable !== undefined) return { status: 'unavailable', message: result.unavailable };
      const { alerts, message } = readRefusal({ output: result.output, dir, files: input.files, origins: input.origins, dirs: this.#options.dirs, originalLine });
      return { status: 'invalid', message, alerts };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
