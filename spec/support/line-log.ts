import { Notifier } from './notifier.ts';

/** Everything a controller printed, with waits on what it prints next. */
export class LineLog {
  /** Each piece of text as printed (a log line, newline included). */
  readonly lines: string[] = [];
  readonly #changes = new Notifier();

  /** The output to give the controller. */
  readonly write = (text: string): void => {
    this.lines.push(text);
    this.#changes.changed();
  };

  /** The number of lines so far: pass it to `line` or `lines` to wait for something after this point. */
  mark(): number {
    return this.lines.length;
  }

  /** Resolves with the first line at or after index `from` that matches, waiting up to `timeoutMs`. */
  async line(from: number, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    const [found] = await this.matching(from, pattern, 1, timeoutMs);
    return found!;
  }

  /** Resolves once `count` lines at or after index `from` match, with them. */
  matching(from: number, pattern: RegExp, count: number, timeoutMs = 15_000): Promise<string[]> {
    return this.#changes.until(
      () => {
        const found = this.lines.slice(from).filter((line) => pattern.test(line));
        return found.length >= count ? found : undefined;
      },
      () => `${this.lines.slice(from).filter((line) => pattern.test(line)).length} of ${count} lines matching ${pattern}`,
      timeoutMs,
    );
  }
}
