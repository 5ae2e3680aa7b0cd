import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { FirstSeen } from './first-seen.ts';

/** A journal this long is folded into the record however small the record. */
const MIN_JOURNAL_BYTES = 64 * 1024;
/** About what a record's entry takes: a key (resource, namespace, name) and a time. */
const RECORD_BYTES_PER_OBJECT = 80;

/**
 * Where local mode keeps the time it first saw each object (first-seen.ts),
 * so a restart keeps the order: a record (`<path>`, JSON) and a journal of
 * what changed since it was written (`<path>.journal`). A change appends a
 * line or two to the journal, whatever the record's size, which matters as it
 * is stored before the objects it stamped are served; once the journal
 * outgrows the record, the record is written again and the journal emptied.
 */
export class FirstSeenStore {
  readonly #path: string;
  readonly #journalPath: string;
  #journalBytes = 0;

  constructor(path: string) {
    this.#path = path;
    this.#journalPath = `${path}.journal`;
  }

  /** The record and its journal as stored; an empty record when there is none. */
  async load(): Promise<FirstSeen> {
    const text = await readFile(this.#path, 'utf8').catch(() => undefined);
    const journal = await readFile(this.#journalPath, 'utf8').catch(() => '');
    this.#journalBytes = Buffer.byteLength(journal);
    return FirstSeen.parse(text, journal);
  }

  /**
   * Stores what changed since the last call: appended to the journal, or the
   * whole record when the journal grew too long or a store failed (what it
   * was to append is in the record).
   */
  async store(seen: FirstSeen): Promise<void> {
    const lines = seen.journal();
    const bytes = Buffer.byteLength(lines);
    try {
      if (this.#journalBytes + bytes <= Math.max(MIN_JOURNAL_BYTES, seen.size * RECORD_BYTES_PER_OBJECT)) {
        await appendFile(this.#journalPath, lines);
        this.#journalBytes += bytes;
        return;
      }
      await writeFile(`${this.#path}.new`, `${JSON.stringify(seen.record(), undefined, 1)}\n`);
      await rename(`${this.#path}.new`, this.#path);
      // Replayed over the record just written, the journal changes nothing: emptied after it, never before.
      await writeFile(this.#journalPath, '');
      this.#journalBytes = 0;
    } catch (error) {
      this.#journalBytes = Number.POSITIVE_INFINITY;
      throw error;
    }
  }
}
