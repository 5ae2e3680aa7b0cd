import { expect } from 'chai';
import { appendFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkBoundaries, cyclesOf, importSpecifiers, projectRules, type BoundaryRules, type Layer } from '../../.ci/check-boundaries.ts';
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

/** The project's rules with layers of the fixture's own modules, bottom first, and nothing allowed the wrong way. */
function rulesOf(layers: readonly (readonly string[])[], change: Partial<BoundaryRules> = {}): BoundaryRules {
  const named: Layer[] = layers.map((modules, i) => ({ name: `L${i}`, modules }));
  return { ...projectRules, layers: named, wrongWay: [], largeFiles: [], ...change };
}

describe('the boundary check (.ci/check-boundaries.ts)', () => {
  const roots: string[] = [];
  const check = async (files: Readonly<Record<string, string>>, rules: BoundaryRules): Promise<string[]> => {
    const root = await tree(files);
    roots.push(root);
    return checkBoundaries(root, rules);
  };
  /** A copy of this project's lib/ and streams/, to break. */
  const copyOfProject = async (): Promise<string> => {
    const root = await mkdtemp(join(tmpdir(), 'boundaries-'));
    roots.push(root);
    for (const folder of ['lib', 'streams']) await cp(join(projectRoot, folder), join(root, folder), { recursive: true });
    return root;
  };
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it('passes on this project: no cycle, every import of lib/ down its layers or listed, lib/ without rxjs or streams/, every file within its size', async () => {
    expect(await checkBoundaries(projectRoot)).to.deep.equal([]);
  });

  it('fails on this project with a cycle and an rxjs import added to lib/', async () => {
    const root = await copyOfProject();
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

  it('fails on this project when the representation imports a translator, a translator the map model, or the renderer an adapter or a domain model', async () => {
    const root = await copyOfProject();
    // Only the first also makes cycles, of files and of folders (the translator imports the representation), reported beside it.
    await appendFile(join(root, 'lib/routing/precedence.ts'), "import { servesClass } from '../ingress/translate-ingress.ts';\nexport const serves = servesClass;\n");
    await appendFile(join(root, 'lib/gateway/api.ts'), "import { NO_PROBLEMS } from '../map-model/problems.ts';\nexport const none = NO_PROBLEMS;\n");
    await appendFile(join(root, 'lib/render/write-files.ts'), "import { selectionFor } from '../kube/select.ts';\nexport const select = selectionFor;\n");
    await appendFile(join(root, 'lib/render/safe-writer.ts'), "import { NO_PROBLEMS } from '../map-model/problems.ts';\nexport const none = NO_PROBLEMS;\n");
    const breaches = await checkBoundaries(root);
    const translators = 'layer "translators and the HAProxy map model"';
    expect(breaches.filter((breach) => !breach.startsWith('import cycle between '))).to.deep.equal([
      `lib/gateway/api.ts imports lib/map-model/problems.ts: lib/map-model (${translators}) is beside lib/gateway (${translators}); a module imports only from the layers below its own`,
      'lib/render/write-files.ts imports lib/kube/select.ts: lib/kube (layer "Kubernetes and HAProxy adapters") is above lib/render (layer "template renderer and retry delays"); a module imports only from the layers below its own',
      `lib/render/safe-writer.ts imports lib/map-model/problems.ts: lib/map-model (${translators}) is above lib/render (layer "template renderer and retry delays"); a module imports only from the layers below its own`,
      `lib/routing/precedence.ts imports lib/ingress/translate-ingress.ts: lib/ingress (${translators}) is above lib/routing (layer "representation of routes"); a module imports only from the layers below its own`,
    ]);
    expect(breaches.filter((breach) => breach.startsWith('import cycle between ')).map((breach) => breach.split(':')[0])).to.deep.equal([
      'import cycle between files',
      'import cycle between folders',
    ]);
  });

  it('keeps a tree whose imports go one way', async () => {
    const breaches = await check(
      {
        'lib/a/one.ts': "import { two } from './two.ts';\nimport { base } from '../base.ts';\nexport const one = two + base;\n",
        'lib/a/two.ts': "import type { B } from '../b/b.ts';\nexport const two = 2;\nexport type T = B;\n",
        'lib/b/b.ts': "import { base } from '../base.ts';\nexport type B = typeof base;\n",
        'lib/base.ts': 'export const base = 1;\n',
        'streams/stage.ts': "import { map } from 'rxjs';\nimport { one } from '../lib/a/one.ts';\nexport const stage = map(() => one);\n",
      },
      rulesOf([['lib/base.ts'], ['lib/b'], ['lib/a']]),
    );
    expect(breaches).to.deep.equal([]);
  });

  it('names every file of an import cycle, type-only imports included', async () => {
    const breaches = await check(
      {
        'lib/a/one.ts': "import { two } from './two.ts';\nexport const one = (): number => two();\n",
        'lib/a/two.ts': "import type { Three } from './three.ts';\nexport const two = (): number => 2;\nexport type Two = Three;\n",
        'lib/a/three.ts': "import { one } from './one.ts';\nexport type Three = ReturnType<typeof one>;\n",
        'streams/x.ts': "export * from './y.ts';\n",
        'streams/y.ts': "import './x.ts';\nexport const y = 1;\n",
      },
      rulesOf([['lib/a']]),
    );
    expect(breaches).to.deep.equal(['import cycle between files: lib/a/one.ts, lib/a/three.ts, lib/a/two.ts', 'import cycle between files: streams/x.ts, streams/y.ts']);
  });

  it('refuses a cycle between folders of lib/ even when no file cycle makes it, and names its import that goes up', async () => {
    const breaches = await check(
      {
        'lib/config/types.ts': "import type { Parsed } from '../kube/syntax.ts';\nexport type Config = Parsed;\n",
        'lib/kube/syntax.ts': 'export type Parsed = string;\n',
        'lib/kube/watch.ts': "import type { Config } from '../config/types.ts';\nexport type Watch = Config;\n",
      },
      rulesOf([['lib/config'], ['lib/kube']]),
    );
    expect(breaches).to.deep.equal([
      'import cycle between folders: lib/config, lib/kube (lib/config -> lib/kube: lib/config/types.ts imports lib/kube/syntax.ts; lib/kube -> lib/config: lib/kube/watch.ts imports lib/config/types.ts)',
      'lib/config/types.ts imports lib/kube/syntax.ts: lib/kube (layer "L1") is above lib/config (layer "L0"); a module imports only from the layers below its own',
    ]);
  });

  it('refuses an import up the layers or beside, each by file, and keeps one down', async () => {
    const files = {
      'lib/base.ts': 'export const base = 1;\n',
      'lib/left/one.ts': "import { base } from '../base.ts';\nimport { two } from '../right/two.ts';\nexport const one = base + two;\n",
      'lib/right/two.ts': 'export const two = 2;\n',
      'lib/right/three.ts': "import { top } from '../top/top.ts';\nexport const three = top;\n",
      'lib/top/top.ts': "import { base } from '../base.ts';\nexport const top = base;\n",
    };
    expect(await check(files, rulesOf([['lib/base.ts'], ['lib/left', 'lib/right'], ['lib/top']]))).to.deep.equal([
      'lib/left/one.ts imports lib/right/two.ts: lib/right (layer "L1") is beside lib/left (layer "L1"); a module imports only from the layers below its own',
      'lib/right/three.ts imports lib/top/top.ts: lib/top (layer "L2") is above lib/right (layer "L1"); a module imports only from the layers below its own',
    ]);
    // The same tree in layers its imports follow.
    expect(await check(files, rulesOf([['lib/base.ts'], ['lib/top'], ['lib/right'], ['lib/left']]))).to.deep.equal([]);
  });

  it('keeps a listed wrong-way edge at its count, and asks for the entry to be lowered or removed when it shrinks', async () => {
    const files = {
      'lib/low/a.ts': "import { b } from '../high/b.ts';\nimport { c } from '../high/c.ts';\nexport const a = b + c;\n",
      'lib/low/d.ts': "import { b } from '../high/b.ts';\nimport type { B } from '../high/b.ts';\nexport const d: B = b;\n",
      'lib/high/b.ts': 'export const b = 1;\nexport type B = number;\n',
      'lib/high/c.ts': 'export const c = 2;\n',
    };
    const listed = (imports: number, change: Partial<BoundaryRules> = {}) =>
      rulesOf([['lib/low'], ['lib/high']], { wrongWay: [{ from: 'lib/low', to: 'lib/high', imports, why: 'a debt' }], ...change });
    // Three file-to-file imports: d.ts imports b.ts twice, which counts once.
    expect(await check(files, listed(3))).to.deep.equal([]);
    expect(await check(files, listed(2))).to.deep.equal([
      'lib/low -> lib/high: 3 imports go the wrong way, above the 2 listed: lib/high (layer "L1") is above lib/low (layer "L0"), and the list only shrinks',
    ]);
    expect(await check(files, listed(4))).to.deep.equal(['lib/low -> lib/high: 3 imports go the wrong way, fewer than the 4 listed: lower the entry to 3']);
    expect(
      await check(
        files,
        listed(3, {
          layers: [
            { name: 'high', modules: ['lib/high'] },
            { name: 'low', modules: ['lib/low'] },
          ],
        }),
      ),
    ).to.deep.equal(['lib/low -> lib/high is listed as going the wrong way, but no import does: remove the entry']);
  });

  it('refuses a module of lib/ in no layer or in two, and a layer naming no module', async () => {
    const breaches = await check(
      { 'lib/a/a.ts': 'export const a = 1;\n', 'lib/b.ts': 'export const b = 1;\n', 'lib/c/c.ts': 'export const c = 1;\n' },
      rulesOf([['lib/a', 'lib/gone'], ['lib/a']]),
    );
    expect(breaches).to.deep.equal([
      'layer "L0" lists lib/gone, which holds no source file',
      'lib/a is in two layers, "L0" and "L1"',
      'lib/b.ts is in no layer: add it to the layers in .ci/check-boundaries.ts',
      'lib/c is in no layer: add it to the layers in .ci/check-boundaries.ts',
    ]);
  });

  it('refuses rxjs (and its subpaths) and streams/ in lib/, and an import of no file', async () => {
    const breaches = await check(
      {
        'lib/a.ts': "import { map } from 'rxjs';\nimport { TestScheduler } from 'rxjs/testing';\nexport const a = [map, TestScheduler];\n",
        'lib/b.ts': "import { stage } from '../streams/stage.ts';\nexport const b = stage;\n",
        'lib/c.ts': "const { gone } = await import('./gone.ts');\nexport const c = gone;\n",
        'streams/stage.ts': 'export const stage = 1;\n',
      },
      rulesOf([['lib/a.ts', 'lib/b.ts', 'lib/c.ts']]),
    );
    expect(breaches).to.deep.equal([
      'lib/a.ts: imports rxjs, which lib/ must not use',
      'lib/a.ts: imports rxjs/testing, which lib/ must not use',
      'lib/b.ts: imports ../streams/stage.ts, from streams/, which lib/ must not use',
      'lib/c.ts: imports ./gone.ts, which is no file',
    ]);
  });

  it('refuses a file above the cap of 600 lines, or above the budget of 400 unless listed, and a listed one that grows', async () => {
    const lines = (count: number) => Array.from({ length: count }, (_, i) => `export const v${i} = ${i};\n`).join('');
    const files = { 'lib/fits.ts': lines(400), 'lib/listed.ts': lines(450), 'streams/long.ts': lines(401), 'streams/huge.ts': lines(601), 'spec/long.ts': lines(900) };
    const largeFiles = [
      { path: 'lib/listed.ts', lines: 450, why: 'one job' },
      { path: 'streams/huge.ts', lines: 700, why: 'listed above the cap' },
    ];
    expect(await check(files, rulesOf([['lib/fits.ts', 'lib/listed.ts']], { largeFiles }))).to.deep.equal([
      'streams/huge.ts: 601 lines, above the cap of 600: split it by concern',
      'streams/long.ts: 401 lines, above the budget of 400: split it by concern, or list it in largeFiles with why it is one job',
    ]);
    const grown = { ...files, 'lib/listed.ts': lines(451), 'lib/fits.ts': lines(10) };
    const stale = [...largeFiles, { path: 'lib/fits.ts', lines: 420, why: 'shrunk since' }, { path: 'lib/gone.ts', lines: 500, why: 'removed since' }];
    expect(await check(grown, rulesOf([['lib/fits.ts', 'lib/listed.ts']], { largeFiles: stale }))).to.deep.equal([
      'lib/listed.ts: 451 lines, grown past the 450 listed in largeFiles: split it by concern',
      'streams/huge.ts: 601 lines, above the cap of 600: split it by concern',
      'streams/long.ts: 401 lines, above the budget of 400: split it by concern, or list it in largeFiles with why it is one job',
      'lib/fits.ts is listed in largeFiles but has 10 lines, within the budget of 400: remove the entry',
      'lib/gone.ts is listed in largeFiles but is no checked file: remove the entry',
    ]);
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
