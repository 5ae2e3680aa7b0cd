import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseCapabilities, readCapabilities } from '../../../lib/haproxy/capabilities.ts';
import { haproxyBinary } from '../../../lib/haproxy/check.ts';

async function versionLine(binary: string): Promise<string> {
  return (await promisify(execFile)(binary, ['-v'])).stdout;
}

/** The first lines of `haproxy -vv` as each version prints them (Debian's builds), with its feature list. */
const vv = (version: string, features: string) => `HAProxy version ${version} 2026/10/14 - https://haproxy.org/\nBuild options :\n  TARGET  = linux-glibc\n\nFeature list : ${features}\n`;

describe('HAProxy capabilities', () => {
  it('reads the version from haproxy -vv', () => {
    expect(parseCapabilities(vv('3.4.7-1', '-51DEGREES +ACCEPT4 +ACME +LUA -PCRE +PCRE2 +QUIC')).version).to.deep.equal({ major: 3, minor: 4, patch: 7, text: '3.4.7-1' });
    expect(parseCapabilities(vv('2.6.12-1+deb12u4', '+LUA')).version).to.deep.equal({ major: 2, minor: 6, patch: 12, text: '2.6.12-1+deb12u4' });
  });

  it('decides what differs between 2.6, 3.0, 3.2 and 3.4 from the version alone', () => {
    const decided = (version: string) => {
      const { synchronousReload, dynamicServerEnabledKeyword, survivorListedAsOld } = parseCapabilities(vv(version, '+LUA'));
      return { synchronousReload, dynamicServerEnabledKeyword, survivorListedAsOld };
    };
    expect(decided('2.6.12-1+deb12u4')).to.deep.equal({ synchronousReload: false, dynamicServerEnabledKeyword: true, survivorListedAsOld: false });
    expect(decided('2.8.5')).to.include({ synchronousReload: true, dynamicServerEnabledKeyword: true });
    expect(decided('3.0.11-1+deb13u4')).to.deep.equal({ synchronousReload: true, dynamicServerEnabledKeyword: false, survivorListedAsOld: false });
    expect(decided('3.2.26-1')).to.deep.equal({ synchronousReload: true, dynamicServerEnabledKeyword: false, survivorListedAsOld: true });
    expect(decided('3.4.7-1')).to.deep.equal({ synchronousReload: true, dynamicServerEnabledKeyword: false, survivorListedAsOld: true });
  });

  it('refuses an answer without a version line', () => {
    expect(() => parseCapabilities('Usage : haproxy [-f <cfgfile>]*\n')).to.throw(/not a "haproxy -vv" answer/);
  });

  it('asks the binary in use, and says which binary failed', async () => {
    const read = await readCapabilities();
    expect(read.version.major).to.be.at.least(2);
    expect(read.version.text).to.equal(/HAProxy version (\S+)/.exec(await versionLine(haproxyBinary()))![1]);
    const failure = await readCapabilities('/nonexistent/haproxy').then(
      () => undefined,
      (error: unknown) => (error as Error).message,
    );
    expect(failure).to.match(/^\/nonexistent\/haproxy -vv failed/);
  });
});
