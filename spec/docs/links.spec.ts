import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { root } from '../../.ci/generate-reference.ts';

/**
 * Every relative link and anchor in the docs resolves, and every repository
 * path a doc names in backticks exists: a renamed file or heading breaks a
 * spec, not a reader's link.
 */

/** The files under `directory` whose names end in `suffix`. */
async function filesUnder(directory: string, suffix: string): Promise<string[]> {
  const entries = await readdir(join(root, directory), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => (entry.isDirectory() ? filesUnder(join(directory, entry.name), suffix) : Promise.resolve(entry.name.endsWith(suffix) ? [join(directory, entry.name)] : []))),
  );
  return nested.flat();
}

/** The text outside fenced code blocks, line by line (fenced lines blanked, so line numbers hold). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced || /^ {4}/.test(line) ? '' : line;
  });
}

/** GitHub's anchor for a heading: formatting dropped, lowercase, punctuation dropped, spaces made hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a document's headings, duplicates numbered -1, -2 as GitHub numbers them. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = counts.get(base) ?? 0;
    counts.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Inline code spans with the code blocks and the spans themselves out of the way of link parsing. */
function codeSpans(line: string): { readonly spans: string[]; readonly rest: string } {
  const spans: string[] = [];
  const rest = line.replace(/(`+)(.+?)\1/g, (_, __, code: string) => {
    spans.push(code.trim());
    return '';
  });
  return { spans, rest };
}

/** The top-level entries of the repository a backticked path may start with. */
const repoRoots = ['lib/', 'streams/', 'spec/', 'bench/', 'examples/', 'docs/', 'chart/', 'templates/', '.ci/'];

/** A backticked text that names a file or folder of this repository: a path under one of its top folders, with no placeholder or glob. */
function repoPath(code: string): string | undefined {
  if (!repoRoots.some((prefix) => code.startsWith(prefix))) return undefined;
  if (!/^[\w./-]+$/.test(code) || code.includes('..')) return undefined;
  return code.replace(/[.:,]$/, '');
}

/**
 * Files a comment names: a path from the repository's root (`lib/escape.ts`),
 * or a source file by its name (`route-policies.ts`), which must exist beside
 * the comment or anywhere in the sources. Globs (`real-apiserver*.spec.ts`)
 * and one-letter fixture names (`a.ts`) are no reference.
 */
function namedInComments(source: string): string[] {
  const comments = [...source.matchAll(/\/\*[\s\S]*?\*\/|\/\/.*$/gm)].map(([comment]) => comment).join('\n');
  return [...comments.matchAll(/(?<![\w/.-])((?:lib|streams|spec|bench|examples|\.ci)\/[\w./*-]+|[\w*-]{2,}\.ts)(?!\w)/g)]
    .map(([, name]) => name!.replace(/\.$/, ''))
    .filter((name) => !name.includes('*'));
}

const docs = async () => ['README.md', 'CONTRIBUTING.md', 'chart/README.md', ...(await filesUnder('docs', '.md')), ...(await filesUnder('examples', '.md'))];

describe('the docs', () => {
  let texts: Map<string, string>;
  before(async () => {
    texts = new Map(await Promise.all((await docs()).map(async (file): Promise<[string, string]> => [file, await readFile(join(root, file), 'utf8')])));
  });

  it('computes anchors as GitHub does', () => {
    expect([...anchors('# Local mode\n## `render` and `validate`\n## Metrics (port 9090, `/metrics`)\n## A\n## A\n```\n# not a heading\n```\n')]).to.deep.equal([
      'local-mode',
      'render-and-validate',
      'metrics-port-9090-metrics',
      'a',
      'a-1',
    ]);
  });

  it('link only to files and anchors that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [file, text] of texts) {
      prose(text).forEach((line, index) => {
        for (const [, target] of codeSpans(line).rest.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
          const [path, anchor] = target!.split('#') as [string, string | undefined];
          const linked = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
          const where = `${file}:${index + 1}: ${target}`;
          checked += 1;
          if (relative(root, join(root, linked)).startsWith('..') || !existsSync(join(root, linked))) broken.push(`${where} (no ${linked})`);
          else if (anchor !== undefined && linked.endsWith('.md')) {
            const headings = anchors(texts.get(linked) ?? readFileSync(join(root, linked), 'utf8'));
            if (!headings.has(anchor)) broken.push(`${where} (no heading of ${linked} has the anchor #${anchor})`);
          }
        }
      });
    }
    expect(broken).to.deep.equal([]);
    // The docs link to one another dozens of times: far fewer means the link syntax was missed.
    expect(checked).to.be.greaterThan(40);
  });

  it('name only repository paths that exist', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [file, text] of texts) {
      prose(text).forEach((line, index) => {
        for (const code of codeSpans(line).spans) {
          const path = repoPath(code);
          if (path === undefined) continue;
          checked += 1;
          if (!existsSync(join(root, path))) missing.push(`${file}:${index + 1}: ${path}`);
        }
      });
    }
    expect(missing).to.deep.equal([]);
    expect(checked).to.be.greaterThan(100);
  });

  it('and the code comments name only files that exist', async () => {
    const sources = (await Promise.all(['lib', 'streams', 'spec', 'bench', 'examples', '.ci'].map((directory) => filesUnder(directory, '.ts')))).flat();
    const names = new Set(sources.map((file) => file.slice(file.lastIndexOf('/') + 1)));
    const missing: string[] = [];
    let checked = 0;
    for (const file of sources) {
      for (const name of namedInComments(await readFile(join(root, file), 'utf8'))) {
        checked += 1;
        const exists = name.includes('/') ? existsSync(join(root, name)) : existsSync(join(root, dirname(file), name)) || names.has(name);
        if (!exists) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).to.deep.equal([]);
    expect(checked).to.be.greaterThan(100);
  });
});
