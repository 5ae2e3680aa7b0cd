import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { findGuardedDirectives } from '../../../lib/haproxy/directive-guard.ts';
import { BODY_LIMIT_LUA_FILE } from '../../../lib/lua/body-limit.ts';
import { REQUEST_MIRROR_LUA_FILE } from '../../../lib/lua/request-mirror.ts';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

describe('directive guard', () => {
  it("lets lua-load name the controller's own scripts (request mirror, body limit) under the base directory, and no other Lua", () => {
    const config = [
      'global',
      '  default-path origin /etc/haproxy',
      `  lua-load general/${REQUEST_MIRROR_LUA_FILE}`,
      `  lua-load general/${BODY_LIMIT_LUA_FILE}`,
      `  lua-load /etc/haproxy/general/${REQUEST_MIRROR_LUA_FILE}`,
      // No base directory to hold it, outside it, through "..", from a variable, another name, per thread, with more words.
      `  lua-load /tmp/${REQUEST_MIRROR_LUA_FILE}`,
      `  lua-load general/../../tmp/${REQUEST_MIRROR_LUA_FILE}`,
      `  lua-load "\${DIR}/${REQUEST_MIRROR_LUA_FILE}"`,
      `  lua-load general/x-${REQUEST_MIRROR_LUA_FILE}`,
      `  lua-load-per-thread general/${REQUEST_MIRROR_LUA_FILE}`,
      `  lua-load general/${REQUEST_MIRROR_LUA_FILE} extra`,
    ].join('\n');
    expect(findGuardedDirectives(config).map((f) => [f.line, f.directive])).to.deep.equal([
      [6, 'lua-load'],
      [7, 'lua-load'],
      [8, 'environment-variables'],
      [8, 'lua-load'],
      [9, 'lua-load'],
      [10, 'lua-load-per-thread'],
      [11, 'lua-load'],
    ]);
    const unbased = ['global', `  lua-load general/${REQUEST_MIRROR_LUA_FILE}`].join('\n');
    expect(findGuardedDirectives(unbased).map((f) => f.directive)).to.deep.equal(['lua-load']);
  });

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
      [10, 'environment-variables'],
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

  it('covers every HAProxy 2.6 keyword that loads code, dumps memory or reads a file, the config of filters included', () => {
    const config = [
      'global',
      '  ssl-provider legacy',
      '  ssl-provider-path /usr/lib/ossl-modules',
      '  set-dumpable',
      '  pidfile /etc/passwd',
      '  httpclient.ssl.ca-file /etc/shadow',
      '  ca-base /etc',
      '  h1-case-adjust-file /etc/passwd',
      'frontend f',
      '  bind :443 ssl crt ssl/a.pem ca-sign-file /root/ca.pem tls-ticket-keys /root/keys',
      '  filter spoe engine x config /etc/passwd',
      '  filter opentracing id t config /abs/ot.cfg',
      '  filter spoe engine y config general/spoe.cfg',
      '  http-error status 500 content-type text/plain file /etc/passwd',
      '  http-request deny deny_status 403 errorfile /etc/passwd',
      '  http-request tarpit lf-file general/x.txt',
      '  http-request add-acl(/etc/passwd) x',
      '  http-request set-header X-File file',
      'backend b',
      '  server-state-file-name /etc/passwd',
      '  server s 10.0.0.1:443 ssl ca-file @system-ca',
    ].join('\n');
    expect(findGuardedDirectives(config).map((f) => [f.line, f.directive])).to.deep.equal([
      [2, 'ssl-provider'],
      [3, 'ssl-provider-path'],
      [4, 'set-dumpable'],
      [5, 'files-outside-base'],
      [6, 'files-outside-base'],
      [7, 'files-outside-base'],
      [8, 'files-outside-base'],
      [10, 'files-outside-base'],
      [11, 'files-outside-base'],
      [12, 'files-outside-base'],
      [14, 'return-file'],
      [15, 'return-file'],
      [16, 'return-file'],
      [17, 'files-outside-base'],
      [20, 'files-outside-base'],
    ]);
  });

  it('never lets a keyword or a file name come from an environment variable, and guards every other variable', () => {
    const config = [
      'global',
      '  "${LUAKW}" x.lua',
      '  "$LUAKW" x.lua',
      '  lua"${X}" x.lua',
      '  errorfile 404 "${DIR}/404.http"',
      '  log "${LOG_ADDR}" local0',
      "  log '${LITERAL}' local0",
      '  log \\$NOT_A_VARIABLE local0',
      '  log "\\${ESCAPED}" local0',
      '  log $UNQUOTED local0',
      '  description "$1 costs"',
      '  log 127.0.0.1 "${FACILITY[*]}"',
    ].join('\n');
    const findings = findGuardedDirectives(config);
    expect(findings.map((f) => [f.line, f.directive, f.always])).to.deep.equal([
      [2, 'environment-variables', true],
      [3, 'environment-variables', true],
      [4, 'environment-variables', true],
      [5, 'environment-variables', true],
      [5, 'files-outside-base', false],
      [6, 'environment-variables', false],
      [12, 'environment-variables', true],
    ]);
    expect(findings[0]!.text).to.equal('"${LUAKW}" x.lua');
  });

  it('finds nothing in what the shipped templates render, comments and quoted text included', async () => {
    const loaded = loadControllerConfig(await readFile(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const { config } = loaded;
    for (const test of config.validationTests) {
      const output = createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, test.fixtures, config.ignoreFields) });
      expect(findGuardedDirectives(output.files.config), test.name).to.deep.equal([]);
    }
    expect(findGuardedDirectives('# lua-load x.lua\n  description "lua-load x"\n  "" lua-load')).to.deep.equal([]);
  });
});
