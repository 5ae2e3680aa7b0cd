import { compareCodeUnits } from '../compare.ts';

/**
 * The users of a basic-auth Secret, in either controller's format, each
 * with whether HAProxy will accept its password.
 *
 * HAProxy checks a password by calling the system's crypt(3) with the
 * stored hash as the salt and comparing. The image's crypt(3) is Debian
 * bookworm's libxcrypt (libcrypt1 4.4.33), and which schemes it verifies
 * was measured, not assumed: spec/lib/annotations/crypt-schemes.spec.ts
 * runs a real HAProxy with one user per scheme and real requests with the
 * right and a wrong password. Apache's own schemes are not crypt(3)
 * schemes: htpasswd's default `$apr1$`, `{SHA}` (-s) and plain text (-p)
 * never match, so such a user could never log in.
 */

export interface CryptScheme {
  readonly name: string;
  /** Why a user with this scheme cannot log in; absent when HAProxy verifies it. */
  readonly unusable?: string;
}

const REHASH = 're-hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m yescrypt`';

/** Recognised by the start of the hash; the first that matches names the scheme. */
const SCHEMES: readonly { readonly test: RegExp; readonly scheme: CryptScheme }[] = [
  { test: /^\$y\$/, scheme: { name: 'yescrypt' } },
  { test: /^\$gy\$/, scheme: { name: 'gost-yescrypt' } },
  { test: /^\$7\$/, scheme: { name: 'scrypt' } },
  { test: /^\$2[abxy]\$/, scheme: { name: 'bcrypt' } },
  { test: /^\$6\$/, scheme: { name: 'sha512crypt' } },
  { test: /^\$5\$/, scheme: { name: 'sha256crypt' } },
  { test: /^\$sha1\$/, scheme: { name: 'sha1crypt' } },
  { test: /^\$md5[$,]/, scheme: { name: 'sunmd5' } },
  { test: /^\$1\$/, scheme: { name: 'md5crypt' } },
  { test: /^\$3\$/, scheme: { name: 'nthash' } },
  { test: /^_[./0-9A-Za-z]{19}$/, scheme: { name: 'bsdicrypt' } },
  { test: /^[./0-9A-Za-z]{13}$/, scheme: { name: 'descrypt' } },
  { test: /^\$apr1\$/, scheme: { name: 'apr1', unusable: `Apache's MD5 ($apr1$, htpasswd's default) is not a crypt(3) scheme, so HAProxy never matches it: ${REHASH}` } },
  { test: /^\{SHA\}/, scheme: { name: 'sha1-base64', unusable: `{SHA} (htpasswd -s) is not a crypt(3) scheme, so HAProxy never matches it: ${REHASH}` } },
];

const UNKNOWN: CryptScheme = { name: 'unknown', unusable: `not a crypt(3) hash HAProxy knows (a plain-text password is never matched): ${REHASH}` };

export function cryptScheme(hash: string): CryptScheme {
  return SCHEMES.find(({ test }) => test.test(hash))?.scheme ?? UNKNOWN;
}

/** A usable user's name is a safe word (lib/escape.ts); its hash is crypt(3)'s alphabet, "_" and "$" (see HASH). */
export type AuthUser =
  | { readonly name: string; readonly status: 'usable'; readonly scheme: string; readonly hash: string }
  | { readonly name: string; readonly status: 'unusable'; readonly reason: string };

export interface AuthUsers {
  /** htpasswd lines under `auth` (ingress-nginx's auth-file), or one key per user (haproxy.org, and ingress-nginx's auth-map). */
  readonly format: 'htpasswd' | 'per-key';
  /** In name order; a user is never dropped silently: one that cannot log in says why. */
  readonly users: readonly AuthUser[];
  /** What in the Secret is not a user at all (a line without ":", a value that is not base64), named without its content. */
  readonly malformed: readonly string[];
}

/** Letters, digits and `. _ @ + -`, not starting with "-": enough for names and e-mail addresses, and a safe word. */
const USER_NAME = /^[A-Za-z0-9._@+][A-Za-z0-9._@+-]{0,127}$/;
/**
 * The characters of a usable hash: crypt(3)'s alphabet, "_" and "$". Written
 * bare or in single quotes, such a hash is one word HAProxy reads
 * literally; templates must not put it in double quotes, where "$" would
 * expand an environment variable.
 */
const HASH = /^[A-Za-z0-9./$_]{1,512}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Reads a Secret's `data` (base64 values, as the API serves them). A Secret
 * with an `auth` key holding htpasswd lines is read as htpasswd; otherwise
 * each key is a user and its value the hash.
 */
export function readAuthUsers(data: Readonly<Record<string, string>> | undefined): AuthUsers {
  const decoded = new Map<string, string | undefined>();
  for (const [key, value] of Object.entries(data ?? {})) decoded.set(key, BASE64.test(value) ? Buffer.from(value, 'base64').toString('utf8') : undefined);
  const htpasswd = decoded.get('auth');
  if (htpasswd !== undefined && htpasswd.includes(':')) return fromHtpasswd(htpasswd);
  const malformed: string[] = [];
  const entries: [string, string][] = [];
  for (const [key, value] of decoded) {
    if (value === undefined) malformed.push(`key ${JSON.stringify(key)}: its value is not base64`);
    else entries.push([key, value.trim()]);
  }
  return { format: 'per-key', users: users(entries), malformed };
}

function fromHtpasswd(text: string): AuthUsers {
  const malformed: string[] = [];
  const entries: [string, string][] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    if (colon <= 0) malformed.push(`line ${index + 1} of auth: not "user:hash"`);
    else entries.push([line.slice(0, colon), line.slice(colon + 1)]);
  });
  return { format: 'htpasswd', users: users(entries), malformed };
}

function users(entries: readonly [string, string][]): AuthUser[] {
  const seen = new Set<string>();
  const read: AuthUser[] = [];
  for (const [name, hash] of entries) {
    read.push(seen.has(name) ? { name, status: 'unusable', reason: 'appears more than once: only the first is read' } : user(name, hash));
    seen.add(name);
  }
  return read.sort((a, b) => compareCodeUnits(a.name, b.name));
}

function user(name: string, hash: string): AuthUser {
  if (!USER_NAME.test(name)) return { name, status: 'unusable', reason: 'the user name is not admitted: use letters, digits and . _ @ + - (at most 128), not starting with "-"' };
  const scheme = cryptScheme(hash);
  if (scheme.unusable !== undefined) return { name, status: 'unusable', reason: scheme.unusable };
  // The reason never quotes the hash: a Secret's content stays out of reports and logs.
  if (!HASH.test(hash)) return { name, status: 'unusable', reason: `the ${scheme.name} hash has characters outside A-Z a-z 0-9 . / $ _, which the configuration does not admit: ${REHASH}` };
  return { name, status: 'usable', scheme: scheme.name, hash };
}
