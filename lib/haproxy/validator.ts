import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataplaneSettings } from '../config/types.ts';
import { errorMessage } from '../error-message.ts';
import type { RenderedFiles, RenderOrigins, ValidationVerdict } from '../pipeline/model.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { checkConfig, configurationToCheck, haproxyBinary } from './check.ts';
import { scanLines, SECTION_KEYWORDS, tokenizeLine } from './config-parser.ts';
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
  let inPeers = false;
  let peer: string | undefined;
  scanLines(config, (first, start, end) => {
    if (first === undefined || first === '') return true;
    if (SECTION_KEYWORDS.has(first)) {
      if (inPeers) return false;
      inPeers = first === 'peers';
    } else if (inPeers && first === 'peer') {
      peer = tokenizeLine(config.slice(start, end)).words[1];
      return false;
    }
    return true;
  });
  return peer;
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
  // The base never holds a newline: replacing in the whole text is replacing in each line. By a function, for V8
  // gives that result as one flat string, where a replacement string gives a rope the scan below would copy again.
  const under = base === undefined ? undefined : new RegExp(`(?<![\\w.~/-])${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=/)`, 'g');
  const text = under === undefined ? config : config.replace(under, () => dir);
  let section: string | undefined;
  let globalAt = -1;
  let globalEnd = 0;
  // Where each default-path of the global section starts and ends in `text`.
  const replaced: number[] = [];
  scanLines(text, (first, start, end, line) => {
    if (first === undefined) return;
    if (!LEADING_SPACE.test(text.charAt(start))) section = first;
    if (first === 'global' && globalAt < 0) {
      globalAt = line - 1;
      globalEnd = end;
    }
    if (section === 'global' && first === 'default-path') replaced.push(start, end);
  });
  if (replaced.length > 0) {
    const parts: string[] = [];
    let from = 0;
    for (let i = 0; i < replaced.length; i += 2) {
      parts.push(text.slice(from, replaced[i]), directive);
      from = replaced[i + 1]!;
    }
    parts.push(text.slice(from));
    return { text: parts.join(''), originalLine: (line) => line };
  }
  const added = globalAt + 1;
  const inserted = globalAt < 0 ? 2 : 1;
  const firstShifted = globalAt < 0 ? 1 : added + 1;
  return {
    text: globalAt < 0 ? `global\n${directive}\n${text}` : `${text.slice(0, globalEnd)}\n${directive}${text.slice(globalEnd)}`,
    originalLine: (line) => (line < firstShifted ? line : line - inserted < firstShifted ? undefined : line - inserted),
  };
}

/** A line that starts with white space continues the section before it (the rebase's reading). */
const LEADING_SPACE = /^\s/;

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
      const { text: rebased, originalLine } = rebase(input.files.config, dir);
      const text = configurationToCheck(rebased);
      const configFile = await writeRenderedFiles(dir, { ...input.files, config: text }, this.#options.dirs);
      const localPeer = firstPeer(input.files.config);
      const result = await checkConfig(configFile, this.#options.binary ?? haproxyBinary(), {
        allowDirectives: this.#options.allowDirectives,
        text,
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
