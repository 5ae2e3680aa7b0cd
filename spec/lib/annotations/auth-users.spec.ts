import { expect } from 'chai';
import { cryptScheme, readAuthUsers } from '../../../lib/annotations/auth-users.ts';

const base64 = (text: string): string => Buffer.from(text).toString('base64');
const BCRYPT = '$2y$04$ehJ/BjPX7IidaLLJ6tlg/e9lT5JN1b6SRYX3.G4sWDHpSrcQylwYi';
const SHA512 = '$6$pYvqtqYNloqzJAU3$T301D6NrYw1uLcG0.nmm3oZzzHHHhTCA4IllsZR3.TUx1e2E/iarbGXqe9bXMcK/MvViLix8Rz1AAYQeKetO0.';
const APR1 = '$apr1$abcdefgh$h7ZMHhhVcuEqF1m5wGTqF1';
const REHASH = 're-hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m yescrypt`';

describe('readAuthUsers', () => {
  it('reads ingress-nginx htpasswd lines under "auth", in name order, comments and blank lines skipped', () => {
    const read = readAuthUsers({ auth: base64(`# staff\nzoe:${BCRYPT}\n\nadam:${SHA512}\r\nbob:${APR1}\n`) });
    expect(read).to.deep.equal({
      format: 'htpasswd',
      users: [
        { name: 'adam', status: 'usable', scheme: 'sha512crypt', hash: SHA512 },
        { name: 'bob', status: 'unusable', reason: `Apache's MD5 ($apr1$, htpasswd's default) is not a crypt(3) scheme, so HAProxy never matches it: ${REHASH}` },
        { name: 'zoe', status: 'usable', scheme: 'bcrypt', hash: BCRYPT },
      ],
      malformed: [],
    });
  });

  it('reads haproxy.org (and ingress-nginx auth-map) Secrets: one key per user', () => {
    expect(readAuthUsers({ bob: base64(BCRYPT), alice: base64(`${SHA512}\n`) })).to.deep.equal({
      format: 'per-key',
      users: [
        { name: 'alice', status: 'usable', scheme: 'sha512crypt', hash: SHA512 },
        { name: 'bob', status: 'usable', scheme: 'bcrypt', hash: BCRYPT },
      ],
      malformed: [],
    });
  });

  it('names what is not a user without quoting it', () => {
    expect(readAuthUsers({ auth: base64(`adam:${BCRYPT}\nno colon here\n:${BCRYPT}`) }).malformed).to.deep.equal(['line 2 of auth: not "user:hash"', 'line 3 of auth: not "user:hash"']);
    expect(readAuthUsers({ bob: 'not base64!' }).malformed).to.deep.equal(['key "bob": its value is not base64']);
  });

  it('reports a user it cannot admit instead of dropping it: a bad name, a second entry, a hash with characters the configuration refuses', () => {
    const read = readAuthUsers({ auth: base64(`adam:${BCRYPT}\nadam:${SHA512}\n-x:${BCRYPT}\nsun:$md5,rounds=76161$X5EMU8bS$$ErwAytLTLjcAg39eQ9FJG1`) });
    expect(read.users).to.deep.equal([
      { name: '-x', status: 'unusable', reason: 'the user name is not admitted: use letters, digits and . _ @ + - (at most 128), not starting with "-"' },
      { name: 'adam', status: 'usable', scheme: 'bcrypt', hash: BCRYPT },
      { name: 'adam', status: 'unusable', reason: 'appears more than once: only the first is read' },
      { name: 'sun', status: 'unusable', reason: `the sunmd5 hash has characters outside A-Z a-z 0-9 . / $ _, which the configuration does not admit: ${REHASH}` },
    ]);
  });

  it('reads an empty or absent Secret as no users', () => {
    expect(readAuthUsers(undefined)).to.deep.equal({ format: 'per-key', users: [], malformed: [] });
  });

  it('cryptScheme: names schemes by their prefix', () => {
    expect(cryptScheme('$y$j9T$abc').name).to.equal('yescrypt');
    expect(cryptScheme('$2b$10$abc').name).to.equal('bcrypt');
    expect(cryptScheme('saXv7tbCP3cMA').name).to.equal('descrypt');
    expect(cryptScheme('{SHA}abc=')).to.deep.include({ name: 'sha1-base64' });
    expect(cryptScheme('hunter2')).to.deep.include({ name: 'unknown' });
  });
});
