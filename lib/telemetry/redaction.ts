import { Buffer } from 'node:buffer';
import { quotedWord } from '../escape.ts';

export const REDACTED = '[REDACTED]';

/** Shorter values are too likely to be ordinary words to be searched for in every text. */
const minSecretLength = 6;
/** Lines of a multi-line secret this long are searched for on their own: quoted or escaped text breaks the whole. */
const minSecretLineLength = 16;
/** Above this many needles, texts are scanned once with a prefix table instead of once per needle. */
const maxNeedlesForPlainSearch = 16;

/** Key material in PEM form, whole or cut off: every private key type OpenSSL writes. */
const pemPrivateKey = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;
/**
 * A long run of base64 with upper case, lower case and digits is encoded
 * key or Secret material far more often than anything a log needs (hashes
 * and trace ids are lower-case hex), even when its origin is unknown, as in
 * the snippet of a manifest that does not parse.
 */
const base64Run = /[A-Za-z0-9+/]{40,}={0,2}/g;
const looksEncoded = (run: string) => /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);

/**
 * Object keys whose values are credentials wherever they appear
 * (`password`, `dataplane_password`, `clientSecret`, `authorization`...),
 * but not names of such things (`secretName`).
 */
const sensitiveKey =
  /(?:^|[_.-])(?:pass(?:word|wd)?|secret|token|authorization|credentials?|private[_-]?key|api[_-]?key|cookie)$|(?:Password|Passwd|Secret|Token|Credentials?|PrivateKey|ApiKey)$/i;

export function isSensitiveKey(key: string): boolean {
  return sensitiveKey.test(key);
}

/**
 * The forms a secret may take in a text: as is, JSON-escaped, base64, as a
 * rendered configuration writes it in double quotes (`escape.quoted`: a
 * basic-auth hash is `\$5\$...` there), and its longer lines.
 */
function needlesOf(secret: string): string[] {
  if (secret.length < minSecretLength) return [];
  const needles = [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')];
  const quoted = quotedWord(secret).slice(1, -1);
  if (quoted !== secret) needles.push(quoted);
  for (const line of secret.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.length < minSecretLineLength) continue;
    needles.push(trimmed);
    const quotedLine = quotedWord(trimmed).slice(1, -1);
    if (quotedLine !== trimmed) needles.push(quotedLine);
  }
  return needles;
}

/**
 * Removes credentials and Secret data from whatever leaves the controller:
 * log lines, span attributes, debug output. It knows secrets by value
 * (credentials it is told, Secret data from a source it asks at each use)
 * and by shape (PEM private keys, long base64), and redacts object keys that
 * name credentials.
 */
export class Redactor {
  readonly #known = new Set<string>();
  #source: () => readonly string[] = () => [];
  #sourced: readonly string[] = [];
  #needles: readonly string[] = [];
  #byPrefix = new Map<string, string[]>();

  /** A credential to remove from every text from now on. */
  add(secret: string): void {
    for (const needle of needlesOf(secret)) this.#known.add(needle);
    this.#rebuild();
  }

  /**
   * Where Secret values come from (the stores of Secrets). Asked at every
   * scrub; it should return the same array while nothing changed, which is
   * what the needle table is cached on.
   */
  setSource(source: () => readonly string[]): void {
    this.#source = source;
    this.#sourced = [];
    this.#rebuild();
  }

  scrub(text: string): string {
    const sourced = this.#source();
    if (sourced !== this.#sourced) {
      this.#sourced = sourced;
      this.#rebuild();
    }
    let scrubbed = this.#needles.length <= maxNeedlesForPlainSearch ? this.#replacePlain(text) : this.#replaceScanning(text);
    if (scrubbed.includes('PRIVATE KEY-----')) scrubbed = scrubbed.replace(pemPrivateKey, REDACTED);
    return scrubbed.replace(base64Run, (run) => (looksEncoded(run) ? REDACTED : run));
  }

  /**
   * A copy fit to show: values under credential keys and the data of
   * Kubernetes Secrets replaced, every string scrubbed. Maps become objects.
   */
  redact(value: unknown): unknown {
    return this.#redact(value, new WeakSet());
  }

  /** `within` holds the objects being copied around this one: only those make a cycle (one shared by two fields does not). */
  #redact(value: unknown, within: WeakSet<object>): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (typeof value !== 'object' || value === null) return value;
    if (within.has(value)) return '[circular]';
    within.add(value);
    try {
      return this.#copy(value, within);
    } finally {
      within.delete(value);
    }
  }

  #copy(value: object, within: WeakSet<object>): unknown {
    if (Array.isArray(value)) return value.map((item) => this.#redact(item, within));
    const entries = value instanceof Map ? [...value.entries()].map(([k, v]) => [String(k), v] as const) : Object.entries(value);
    const isSecret = (value as { kind?: unknown }).kind === 'Secret';
    const copy: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      if (isSensitiveKey(key) && item !== undefined && item !== null && item !== '') copy[key] = REDACTED;
      else if (isSecret && (key === 'data' || key === 'stringData') && typeof item === 'object' && item !== null) {
        copy[key] = Object.fromEntries(Object.keys(item).map((name) => [name, REDACTED]));
      } else copy[key] = this.#redact(item, within);
    }
    return copy;
  }

  #rebuild(): void {
    const needles = new Set(this.#known);
    for (const secret of this.#sourced) for (const needle of needlesOf(secret)) needles.add(needle);
    // Longest first, so a whole secret goes before one of its lines.
    this.#needles = [...needles].sort((a, b) => b.length - a.length);
    this.#byPrefix = new Map();
    for (const needle of this.#needles) {
      const prefix = needle.slice(0, minSecretLength);
      const list = this.#byPrefix.get(prefix);
      if (list) list.push(needle);
      else this.#byPrefix.set(prefix, [needle]);
    }
  }

  #replacePlain(text: string): string {
    let result = text;
    for (const needle of this.#needles) if (result.includes(needle)) result = result.replaceAll(needle, REDACTED);
    return result;
  }

  /** One pass over the text whatever the number of needles: each position looks its prefix up. */
  #replaceScanning(text: string): string {
    let result = '';
    let copiedUpTo = 0;
    for (let i = 0; i + minSecretLength <= text.length;) {
      const candidates = this.#byPrefix.get(text.slice(i, i + minSecretLength));
      const found = candidates?.find((needle) => text.startsWith(needle, i));
      if (found === undefined) {
        i++;
        continue;
      }
      result += text.slice(copiedUpTo, i) + REDACTED;
      i += found.length;
      copiedUpTo = i;
    }
    return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
  }
}
