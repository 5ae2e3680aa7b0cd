import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceDirectory, referencePages, root } from '../../.ci/generate-reference.ts';

/**
 * docs/reference/ is generated from the code (.ci/generate-reference.ts):
 * a change to a view type, a flag, a metric or an annotation rule that is
 * not regenerated fails here rather than leaving the reference stale.
 */
describe('the generated reference (docs/reference/)', () => {
  let pages: Map<string, string>;
  before(async () => {
    pages = await referencePages();
  });

  it('holds exactly the pages the generator writes', async () => {
    const committed = (await readdir(join(root, referenceDirectory))).sort();
    expect(committed, 'run `npm run docs:reference` and commit docs/reference/').to.deep.equal([...pages.keys()].sort());
  });

  it('is what the generator writes from the code today', async () => {
    const stale: string[] = [];
    for (const [file, text] of pages) {
      if ((await readFile(join(root, referenceDirectory, file), 'utf8')) !== text) stale.push(`${referenceDirectory}/${file}`);
    }
    expect(stale, 'out of date with the code: run `npm run docs:reference` and commit docs/reference/').to.deep.equal([]);
  });

  it('documents every name of the template context', () => {
    // The context's top-level names, as renderer.ts builds them and the routing view adds them: a new one without a declaration fails typecheck, one without a doc comment fails here.
    const context = pages.get('template-view.md')!.split('## TemplatePaths')[0]!;
    for (const name of ['templateValues', 'paths', 'resources', 'fleet', 'escape', 'routes', 'ingress']) expect(context).to.match(new RegExp(`\\| \`${name}\` \\| [^|]+\\| [^|\\s]`));
  });
});
