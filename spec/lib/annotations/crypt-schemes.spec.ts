import { expect } from 'chai';
import { readAuthUsers, type AuthUser } from '../../../lib/annotations/auth-users.ts';
import { get, startHaproxy, type RunningHaproxy } from './haproxy-fixture.ts';

/**
 * Which password hashes HAProxy accepts, measured: a real HAProxy (the
 * Debian package, on the libcrypt the chart's image has: bookworm's
 * libxcrypt) with one user per scheme, and real requests with the right and
 * a wrong password. readAuthUsers must call a user usable exactly when
 * HAProxy lets it in. Without HAProxy this fails; it never skips.
 *
 * Every hash is of PASSWORD, made with libxcrypt's crypt_gensalt/crypt
 * (and `openssl passwd -apr1` for Apache's MD5).
 */
const PASSWORD = 'secret-pw';

const HASHES: Readonly<Record<string, string>> = {
  yescrypt: '$y$j9T$Spa.PKpCR6RZiF.j18LyQ0$r.gFVQafQUhPDb6e3zIT/Le8wCvINXwdJStqeyhb92.',
  gost: '$gy$j9T$YsBOYApTHyKTZ2ncvFPzz1$7.VIoLfbC.vqMaChEKbbgqOT9.S./41Yc0S51lq3wg1',
  scrypt: '$7$CU..../....GGNvYKh3cwATi4X5ztbL50$NVn.IZ2AeW10hio49b7GWH2qeSe5ZGxkxfGP1I8L/s/',
  'bcrypt-2b': '$2b$04$J86M7HshOEFXvcCPKOzB0.4/K3RpMrAukiDh/pMFPrwn52oKiyvXe',
  'bcrypt-2y': '$2y$04$ehJ/BjPX7IidaLLJ6tlg/e9lT5JN1b6SRYX3.G4sWDHpSrcQylwYi',
  'bcrypt-2a': '$2a$04$ey01CISTVvzOWtmRZfmJ4uI6ZlJXfehGfHwctwdfYdYPA8STrHdzG',
  sha512: '$6$pYvqtqYNloqzJAU3$T301D6NrYw1uLcG0.nmm3oZzzHHHhTCA4IllsZR3.TUx1e2E/iarbGXqe9bXMcK/MvViLix8Rz1AAYQeKetO0.',
  sha256: '$5$AD7mv6Tnf7SkPyfO$HKieUFA8b5OokXfAqZaQZhnUjm9TGqZ8awMh8wOuO04',
  sha1crypt: '$sha1$206958$Tk176QS/56CJlzPxxX2m$IuI4BWCqKb5XA7IJmCtfRIX6NEzn',
  md5: '$1$Y3UQH4M8$9tOlT8wbAXKaoygy4GYFG/',
  nthash: '$3$$aa4a43f790c87996c8eb915c58e30d53',
  bsdi: '_J9..7ORFlxZHPRtgKQI',
  des: 'saXv7tbCP3cMA',
  apr1: '$apr1$abcdefgh$h7ZMHhhVcuEqF1m5wGTqF1',
  sha: '{SHA}C5URNWIiYDj4DO8+Ih+LdY8EvGQ=',
  plain: PASSWORD,
};

/** What each user must be, so a change in the table of schemes shows here as well as against HAProxy. */
const USABLE = ['bcrypt-2a', 'bcrypt-2b', 'bcrypt-2y', 'bsdi', 'des', 'gost', 'md5', 'nthash', 'scrypt', 'sha1crypt', 'sha256', 'sha512', 'yescrypt'];

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('basic-auth hashes against a real HAProxy', function () {
  this.timeout(30_000);
  let haproxy: RunningHaproxy;
  let users: readonly AuthUser[];
  const status = async (user: string, password: string): Promise<number> => (await get(haproxy.port, '/', `${user}:${password}`)).status;

  before(async () => {
    users = readAuthUsers(Object.fromEntries(Object.entries(HASHES).map(([name, hash]) => [name, base64(hash)]))).users;
    // Every user is written, the unusable ones too, to show HAProxy refusing them; single quotes keep each hash literal.
    haproxy = await startHaproxy(
      (bind) => [
        'userlist users',
        ...Object.entries(HASHES).map(([name, hash]) => `  user ${name} password '${hash}'`),
        'frontend fe',
        `  bind ${bind}`,
        '  http-request auth realm test unless { http_auth(users) }',
        '  http-request return status 200 content-type text/plain string ok',
      ],
      async (port) => (await get(port, '/', 'nobody:x')).status === 401,
    );
  });

  after(async () => {
    await haproxy?.stop();
  });

  it('reads one user per scheme and calls usable exactly the schemes listed', () => {
    expect(users.map((user) => user.name)).to.deep.equal(Object.keys(HASHES).sort());
    expect(users.filter((user) => user.status === 'usable').map((user) => user.name)).to.deep.equal(USABLE);
  });

  it('lets in a usable user with the right password only, and never an unusable one', async () => {
    for (const user of users) {
      expect(await status(user.name, PASSWORD), `${user.name} with the right password`).to.equal(user.status === 'usable' ? 200 : 401);
      expect(await status(user.name, 'wrong-pw'), `${user.name} with a wrong password`).to.equal(401);
    }
  });

  it('says why each unusable user cannot log in', () => {
    const reasons = Object.fromEntries(users.flatMap((user) => (user.status === 'unusable' ? [[user.name, user.reason]] : [])));
    const rehash = 're-hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m yescrypt`';
    expect(reasons).to.deep.equal({
      apr1: `Apache's MD5 ($apr1$, htpasswd's default) is not a crypt(3) scheme, so HAProxy never matches it: ${rehash}`,
      sha: `{SHA} (htpasswd -s) is not a crypt(3) scheme, so HAProxy never matches it: ${rehash}`,
      plain: `not a crypt(3) hash HAProxy knows (a plain-text password is never matched): ${rehash}`,
    });
  });
});
