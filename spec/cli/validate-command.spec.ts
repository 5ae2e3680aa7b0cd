import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
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
    for (const test of ['empty-cluster', 'server-header', 'hosts-paths-and-shared-backends', 'tls', 'missing-service-and-secret', 'default-backend', 'injection-is-excluded']) {
      expect(output.text()).to.match(new RegExp(`^${test} +haproxy_valid +pass`, 'm'));
    }
    expect(output.text()).to.match(/^\d+ passed, 0 failed \(\d+ assertions in 7 tests\)$/m);
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
});
