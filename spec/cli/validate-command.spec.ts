import { expect } from 'chai';
import { access, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateCommand } from '../../lib/cli/validate-command.ts';
import type { CommandOutput } from '../../lib/cli/output.ts';

function captured(): CommandOutput & { text: () => string } {
  const chunks: string[] = [];
  return { out: (t) => void chunks.push(t), err: (t) => void chunks.push(t), text: () => chunks.join('') };
}

describe('validate command', () => {
  it('passes every validation test of the shipped configuration through the real haproxy', async () => {
    const output = captured();
    const code = await validateCommand({ config: undefined }, output);
    expect(output.text(), output.text()).to.not.include('FAIL');
    expect(code).to.equal(0);
    for (const test of [
      'empty-cluster',
      'server-header',
      'hosts-paths-and-shared-backends',
      'tls',
      'missing-service-and-secret',
      'default-backend',
      'injection-is-excluded',
      'route-settings',
      'external-auth',
      'backend-settings',
      'client-certificates',
      'tls-and-tcp-routes',
    ]) {
      expect(output.text()).to.match(new RegExp(`^${test} +haproxy_valid +pass`, 'm'));
    }
    expect(output.text()).to.match(/^\d+ passed, 0 failed \(\d+ assertions in 12 tests\)$/m);
  });

  it('prints failures in the table and exits non-zero', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'validate-'));
    await writeFile(
      join(dir, 'config.yaml'),
      `watchedResources:
  services: { apiVersion: v1, kind: Service }
templates:
  haproxyConfig: |
    defaults
      mode http
    listen x
      bind 127.0.0.1:0
      {{#resources.services}}
      bogus-keyword {{metadata.name}}
      {{/resources.services}}
validationTests:
  - name: broken
    fixtures:
      services: [ { metadata: { name: web, namespace: default } } ]
    assertions:
      - { type: haproxy_valid }
      - { type: contains, pattern: "bogus-keyword web" }
      - { type: match_count, pattern: "^listen", count: 2 }
`,
    );
    const output = captured();
    expect(await validateCommand({ config: join(dir, 'config.yaml') }, output)).to.equal(1);
    expect(output.text()).to.match(/^broken +haproxy_valid +FAIL +.*bogus-keyword/m);
    expect(output.text()).to.match(/^broken +contains haproxy\.cfg \/bogus-keyword web\/ +pass/m);
    expect(output.text()).to.match(/^broken +match_count haproxy\.cfg \/\^listen\/ = 2 +FAIL +1 matches/m);
    expect(output.text()).to.include('1 passed, 2 failed');
  });

  /** A configuration of one test, `haproxy_valid`, over a template of a global section, defaults and one frontend. */
  function oneTest(options: { readonly name: string; readonly top?: string; readonly global?: string; readonly frontend?: string; readonly files?: string }): string {
    const indent = (text: string | undefined, by: string) =>
      text === undefined
        ? ''
        : `${text
            .split('\n')
            .map((line) => by + line)
            .join('\n')}\n`;
    return `${options.top ?? ''}watchedResources:
  services: { apiVersion: v1, kind: Service }
templates:
  haproxyConfig: |
    global
      default-path origin {{paths.base}}
${indent(options.global, '      ')}    defaults
      mode http
      timeout client 1s
      timeout server 1s
      timeout connect 1s
    frontend f
      bind 127.0.0.1:18999
${indent(options.frontend, '      ')}${options.files ? `  files:\n${indent(options.files, '    ')}` : ''}validationTests:
  - name: ${options.name}
    fixtures: {}
    assertions:
      - { type: haproxy_valid }
`;
  }

  it('runs the fixtures through the directive guard: Lua is never run unless allowed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'validate-'));
    const marker = join(dir, 'lua-ran');
    const config = (top: string) => oneTest({ name: 'lua', top, global: 'lua-load general/x.lua', files: `x.lua: |\n  io.open("${marker}", "w"):write("ran")` });
    await writeFile(join(dir, 'config.yaml'), config(''));
    const output = captured();
    expect(await validateCommand({ config: join(dir, 'config.yaml') }, output)).to.equal(1);
    expect(output.text()).to.match(/^lua +haproxy_valid +FAIL +.*lua-load loads and runs Lua code/m);
    expect(
      await access(marker).then(
        () => true,
        () => false,
      ),
    ).to.equal(false);

    // Allowed, the guard lets it through to the real haproxy -c, which runs the Lua.
    await writeFile(join(dir, 'config.yaml'), config('allowDirectives: [lua-load]\n'));
    const allowed = captured();
    expect(await validateCommand({ config: join(dir, 'config.yaml') }, allowed), allowed.text()).to.equal(0);
    expect(await readFile(marker, 'utf8')).to.equal('ran');
  });

  it('runs haproxy -c with an empty environment: no variable of this process reaches it', async () => {
    expect(process.env['HOME']).to.be.a('string').and.not.equal('');
    const dir = await mkdtemp(join(tmpdir(), 'validate-'));
    // "${HOME}" ends the line: empty, HAProxy drops the word and the rule lacks its value.
    await writeFile(join(dir, 'config.yaml'), oneTest({ name: 'env', top: 'allowDirectives: [environment-variables]\n', frontend: 'http-request set-header X-Home "${HOME}"' }));
    const output = captured();
    expect(await validateCommand({ config: join(dir, 'config.yaml') }, output)).to.equal(1);
    expect(output.text()).to.match(/^env +haproxy_valid +FAIL +.*'http-request set-header' rule : expects exactly 2 arguments/m);
  });
});
