import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { CASES_DIR, expectedFiles, goldenDiff, renderCase, writeExpected } from './golden-case.ts';

/**
 * Golden cases (spec/golden/cases/<name>/): manifests in, the files the
 * `render` command writes out, one routing feature or conflict per case.
 * A changed output fails with a unified diff of each file that changed.
 * `npm run golden:update` (UPDATE_GOLDEN=1) writes the expected files
 * afresh: read the diff in review as you would the code's.
 */

const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

describe('golden cases', function () {
  // Each case runs haproxy -c on its render.
  this.timeout(20_000);
  const names = readdirSync(CASES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

  it('has cases', () => {
    expect(names.length).to.be.above(0);
  });

  for (const name of names) {
    it(name, async () => {
      const { code, files } = await renderCase(name);
      if (UPDATE) await writeExpected(name, files);
      const diff = goldenDiff(await expectedFiles(name), files);
      // The diff alone, without chai's diff of the diff.
      if (diff !== '') expect.fail(`${name}: the render changed (npm run golden:update writes it as expected):\n${diff}\n`);
      // haproxy -c accepts every case's output: a golden file of a refused configuration is no golden file.
      expect(code, files.get('messages.txt')).to.equal(0);
    });
  }
});
