import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { findGuardedDirectives } from '../../../lib/haproxy/directive-guard.ts';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

describe('directive guard', () => {
  it('finds every directive that runs code, changes the environment or serves a file', () => {
    const config = [
      'global',
      '  lua-load /etc/haproxy/x.lua',
      '  lua-load-per-thread x.lua',
      '  lua-prepend-path /tmp/?.lua',
      '  ssl-engine rdrand',
      '  setenv A b',
      '  presetenv A b',
      '  resetenv',
      '  unsetenv A',
      '  insecure-fork-wanted',
      '  insecure-setuid-wanted',
      '  external-check',
      'program evil',
      '  command /bin/sh -c id',
      'backend b',
      '  option external-check',
      '  http-request return status 200 content-type text/plain file /etc/passwd',
      '  http-response return status 200 lf-file x.txt',
    ].join('\n');
    expect(findGuardedDirectives(config).map((f) => [f.line, f.directive])).to.deep.equal([
      [2, 'lua-load'],
      [3, 'lua-load-per-thread'],
      [4, 'lua-prepend-path'],
      [5, 'ssl-engine'],
      [6, 'setenv'],
      [7, 'presetenv'],
      [8, 'resetenv'],
      [9, 'unsetenv'],
      [10, 'insecure-fork-wanted'],
      [11, 'insecure-setuid-wanted'],
      [12, 'external-check'],
      [13, 'program'],
      [16, 'external-check'],
      [17, 'return-file'],
      [18, 'return-file'],
    ]);
  });

  it('refuses files read by an absolute path, through "..", or through a variable', () => {
    const config = [
      'defaults',
      '  errorfile 503 /etc/shadow',
      '  errorfile 404 general/404.http',
      'frontend f',
      '  bind :443 ssl crt-list ../secrets/list.txt',
      '  bind :8443 ssl crt ssl/a.pem ca-file /etc/ssl/ca.pem',
      '  acl leak path -f /etc/passwd',
      '  http-request set-var(txn.b) req.hdr(host),map(/etc/haproxy/x.map)',
      '  http-request set-var(txn.c) req.hdr(host),map_beg(maps/prefix.map,default)',
      '  http-request set-var(txn.d) req.hdr(host),map_str("${HOME}/m.map")',
    ].join('\n');
    expect(findGuardedDirectives(config).map((f) => [f.line, f.directive])).to.deep.equal([
      [2, 'files-outside-base'],
      [5, 'files-outside-base'],
      [6, 'files-outside-base'],
      [7, 'files-outside-base'],
      [8, 'files-outside-base'],
      [10, 'files-outside-base'],
    ]);
  });

  it('takes a file named by its absolute path under the configuration’s base directory as inside it', () => {
    const config = [
      'global',
      '  default-path origin /etc/haproxy',
      'frontend f',
      '  http-request set-var(txn.a) req.hdr(host),map(/etc/haproxy/maps/host.map)',
      '  http-request set-var(txn.b) req.hdr(host),map(/etc/haproxy/../passwd.map)',
      '  http-request set-var(txn.c) req.hdr(host),map(/etc/haproxy-other/x.map)',
      '  bind :443 ssl crt /etc/haproxy/ssl/a.pem',
    ].join('\n');
    expect(findGuardedDirectives(config).map((f) => [f.line, f.directive])).to.deep.equal([
      [5, 'files-outside-base'],
      [6, 'files-outside-base'],
    ]);
    // A base of / would make every path inside it: no base at all, then.
    expect(findGuardedDirectives(config.replace('origin /etc/haproxy', 'origin /')).map((f) => f.line)).to.deep.equal([4, 5, 6, 7]);
  });

  it('finds nothing in what the shipped templates render, comments and quoted text included', async () => {
    const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const { config } = loaded;
    for (const test of config.validationTests) {
      const output = createRenderer(config)({ stores: buildStores(config.watchedResources, test.fixtures, config.ignoreFields) });
      expect(findGuardedDirectives(output.files.config), test.name).to.deep.equal([]);
    }
    expect(findGuardedDirectives('# lua-load x.lua\n  description "lua-load x"\n  "" lua-load')).to.deep.equal([]);
  });
});
