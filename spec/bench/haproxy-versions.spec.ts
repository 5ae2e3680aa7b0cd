import { expect } from 'chai';
import { measureVersion, shippedConfig, versionTable } from '../../bench/haproxy-versions.ts';
import { readCapabilities } from '../../lib/haproxy/capabilities.ts';
import { haproxyBinary } from '../../lib/haproxy/check.ts';

describe('bench: HAProxy versions side by side', function () {
  this.timeout(60_000);

  it('times haproxy -c and a reload of the shipped configuration at a tiny size, on the HAProxy in use', async () => {
    const { version } = await readCapabilities();
    const minor = `${version.major}.${version.minor}`;
    const row = await measureVersion(shippedConfig().config, minor, haproxyBinary(), 5, { checks: 1, reloads: 2 });
    expect(row).to.include({ version: minor, size: 5 });
    expect(row.checkMs).to.be.greaterThan(0);
    expect(row.reloadMs).to.be.greaterThan(0);
    const table = versionTable([row, { version: 'other', size: 5, checkMs: 1, reloadMs: undefined, reloadNote: 'Cannot raise FD limit to 30240, limit is 20000.' }]).split('\n');
    expect(table[0]!.trim().split(/\s{2,}/)).to.deep.equal(['ingresses', `${minor} haproxy -c ms`, `${minor} reload ms`, 'other haproxy -c ms', 'other reload ms']);
    expect(table[1]!.trim().split(/\s+/)).to.deep.equal(['5', row.checkMs.toFixed(0), row.reloadMs!.toFixed(0), '1', '-']);
    expect(table[2]).to.equal('- other at 5: HAProxy does not start here: Cannot raise FD limit to 30240, limit is 20000.');
  });
});
