import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { runValidationTests } from '../../../lib/validation/run-tests.ts';

/** The shipped template's Server header: set from templateValues.serverHeader, removed when that is empty. */
describe('the shipped Server header', function () {
  this.timeout(20_000);

  it("is removed, a backend's own included, when templateValues.serverHeader is empty, and haproxy -c accepts that", async () => {
    const shipped = readFileSync(defaultConfigPath(), 'utf8');
    expect(shipped).to.include('  serverHeader: haproxy-template-ic\n');
    const text = shipped
      .replace('  serverHeader: haproxy-template-ic\n', '  serverHeader: ""\n')
      .replace(
        /\nvalidationTests:\n[\s\S]*$/,
        [
          '\nvalidationTests:',
          '  - name: no-server-header',
          '    fixtures: {}',
          '    assertions:',
          '      - { type: haproxy_valid }',
          '      - { type: match_count, pattern: "^  http-after-response del-header Server$", count: 1 }',
          '      - { type: not_contains, pattern: "set-header Server" }',
          '',
        ].join('\n'),
      );
    const loaded = loadControllerConfig(text);
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
    const results = await runValidationTests(loaded.config);
    expect(results.map((r) => `${r.assertion}: ${r.passed ? 'pass' : r.detail}`)).to.deep.equal([
      'haproxy_valid: pass',
      'match_count haproxy.cfg /^  http-after-response del-header Server$/ = 1: pass',
      'not_contains haproxy.cfg /set-header Server/: pass',
    ]);
  });
});
