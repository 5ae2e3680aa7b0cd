import { expect } from 'chai';
import { appendFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkBoundaries, cyclesOf, importSpecifiers } from '../../.ci/check-boundaries.ts';
import { projectRoot } from '../chart/helm.ts';

/** A tree of the given files (path relative to the root, then the text) in a fresh temporary directory. */
async function tree(files: Readonly<Record<string, string>>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'boundaries-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('the boundary check (.ci/check-boundaries.ts)', () => {
  const roots: string[] = [];
  const check = async (files: Readonly<Record<string, string>>): Promise<string[]> => {
    const root = await tree(files);
    roots.push(root);
    return checkBoundaries(root);
  };
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it('passes on this project: no cycle between files or folders, lib/ without rxjs or streams/, every file within 400 lines', async () => {
    expect(await checkBoundaries(projectRoot)).to.deep.equal([]);
  });

  it('fails on this project with a cycle and an rxjs import added to lib/', async () => {
    const root = await mkdtemp(join(tmpdir(), 'boundaries-'));
    roots.push(root);
    for (const folder of ['lib', 'streams']) await cp(join(projectRoot, folder), join(root, folder), { recursive: true });
    // The bottom module importing the configuration, which imports it: a cycle of two files and of two folders.
    await appendFile(join(root, 'lib/pipeline/model.ts'), "import type { ControllerConfig } from '../config/types.ts';\nexport type Configured = ControllerConfig;\n");
    await appendFile(join(root, 'lib/store/indexed-store.ts'), "import { map } from 'rxjs';\nexport const mapped = map;\n");
    const breaches = await checkBoundaries(root);
    expect(breaches).to.include('lib/store/indexed-store.ts: imports rxjs, which lib/ must not use');
    expect(breaches.find((breach) => breach.startsWith('import cycle between files:')))
      .to.include('lib/config/types.ts')
      .and.include('lib/pipeline/model.ts');
    expect(breaches.find((breach) => breach.startsWith('import cycle between folders:')))
      .to.include('lib/config')
      .and.include('lib/pipeline');
  });

  it('keeps a tree whose imports go one way', async () => {
    const breaches = await check({
      'lib/a/one.ts': "import { two } from './two.ts';\nimport { base } from '../base.ts';\nexport const one = two + base;\n",
      'lib/a/two.ts': "import type { B } from '../b/b.ts';\nexport const two = 2;\nexport type T = B;\n",
      'lib/b/b.ts': "import { base } from '../base.ts';\nexport type B = typeof base;\n",
      'lib/base.ts': 'export const base = 1;\n',
      'streams/stage.ts': "import { map } from 'rxjs';\nimport { one } from '../lib/a/one.ts';\nexport const stage = map(() => one);\n",
    });
    expect(breaches).to.deep.equal([]);
  });

  it('names every file of an import cycle, type-only imports included', async () => {
    const breaches = await check({
      'lib/a/one.ts': "import { two } from './two.ts';\nexport const one = (): number => two();\n",
      'lib/a/two.ts': "import type { Three } from './three.ts';\nexport const two = (): number => 2;\nexport type Two = Three;\n",
      'lib/a/three.ts': "import { one } from './one.ts';\nexport type Three = ReturnType<typeof one>;\n",
      'streams/x.ts': "export * from './y.ts';\n",
      'streams/y.ts': "import './x.ts';\nexport const y = 1;\n",
    });
    expect(breaches).to.deep.equal(['import cycle between files: lib/a/one.ts, lib/a/three.ts, lib/a/two.ts', 'import cycle between files: streams/x.ts, streams/y.ts']);
  });

  it('refuses a cycle between folders of lib/ even when no file cycle makes it', async () => {
    const breaches = await check({
      'lib/config/types.ts': "import type { Parsed } from '../kube/syntax.ts';\nexport type Config = Parsed;\n",
      'lib/kube/syntax.ts': 'export type Parsed = string;\n',
      'lib/kube/watch.ts': "import type { Config } from '../config/types.ts';\nexport type Watch = Config;\n",
    });
    expect(breaches).to.deep.equal([
      'import cycle between folders: lib/config, lib/kube (lib/config -> lib/kube: lib/config/types.ts imports lib/kube/syntax.ts; lib/kube -> lib/config: lib/kube/watch.ts imports lib/config/types.ts)',
    ]);
  });

  it('refuses rxjs (and its subpaths) and streams/ in lib/, and an import of no file', async () => {
    const breaches = await check({
      'lib/a.ts': "import { map } from 'rxjs';\nimport { TestScheduler } from 'rxjs/testing';\nexport const a = [map, TestScheduler];\n",
      'lib/b.ts': "import { stage } from '../streams/stage.ts';\nexport const b = stage;\n",
      'lib/c.ts': "const { gone } = await import('./gone.ts');\nexport const c = gone;\n",
      'streams/stage.ts': 'export const stage = 1;\n',
    });
    expect(breaches).to.deep.equal([
      'lib/a.ts: imports rxjs, which lib/ must not use',
      'lib/a.ts: imports rxjs/testing, which lib/ must not use',
      'lib/b.ts: imports ../streams/stage.ts, from streams/, which lib/ must not use',
      'lib/c.ts: imports ./gone.ts, which is no file',
    ]);
  });

  it('refuses a file above 400 lines in lib/ or streams/', async () => {
    const lines = (count: number) => Array.from({ length: count }, (_, i) => `export const v${i} = ${i};\n`).join('');
    const breaches = await check({ 'lib/fits.ts': lines(400), 'streams/long.ts': lines(401), 'spec/long.ts': lines(900) });
    expect(breaches).to.deep.equal(['streams/long.ts: 401 lines, above the budget of 400: split it by concern']);
  });

  it('reads every import form the project writes, and nothing in strings or calls', () => {
    const source = [
      "import Mustache from 'mustache';",
      "import type { A } from './a.ts';",
      'import {',
      '  b,',
      '  type C,',
      "} from '../b.ts';",
      "import * as d from './d.ts';",
      "import e, { f } from './e.ts';",
      "import './side-effect.ts';",
      "export { g } from './g.ts';",
      "export type { H } from './h.ts';",
      "export * from './i.ts';",
      "const j = await import('./j.ts');",
      'const text = \'copy from "k"\';',
      "const l = Array.from('m');",
    ].join('\n');
    expect(importSpecifiers(source)).to.deep.equal(['mustache', './a.ts', '../b.ts', './d.ts', './e.ts', './side-effect.ts', './g.ts', './h.ts', './i.ts', './j.ts']);
  });

  it('finds cycles as groups, self-imports included', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['a', 'c']],
      ['c', ['d']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cyclesOf(graph)).to.deep.equal([['a', 'b'], ['e']]);
  });
});
