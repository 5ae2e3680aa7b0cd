import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { renderCommand } from '../../lib/cli/render-command.ts';
import { unifiedDiff } from './unified-diff.ts';

/**
 * One golden case: `cases/<name>/input.yaml` rendered by the `render`
 * command with the shipped configuration, compared with
 * `cases/<name>/expected/`: haproxy.cfg, maps/ and general/ as written,
 * `messages.txt` (what the command said: exit code, excluded objects,
 * warnings), and `certificates.txt` (each file holding a private key, the
 * certificates, by name and digest: no key is written out in the repository). The output directory's path is
 * written `<out>` so the files do not depend on where the render ran.
 */

export const CASES_DIR = join(import.meta.dirname, 'cases');

/** The rendered files of a case by path under expected/, and the command's exit code. */
export async function renderCase(name: string): Promise<{ readonly code: number; readonly files: ReadonlyMap<string, string> }> {
  const input = await mkdtemp(join(tmpdir(), `golden-${name}-in-`));
  const out = await mkdtemp(join(tmpdir(), `golden-${name}-out-`));
  try {
    await copyFile(join(CASES_DIR, name, 'input.yaml'), join(input, 'input.yaml'));
    const said: string[] = [];
    const code = await renderCommand({ manifests: input, out, config: undefined }, { out: () => undefined, err: (text) => void said.push(text) });
    const placed = (text: string) => text.replaceAll(out, '<out>');
    const files = new Map<string, string>([['messages.txt', placed(`exit code ${code}\n${said.join('')}`)]]);
    const certificates: string[] = [];
    for (const path of await filesUnder(out)) {
      const content = await readFile(join(out, path), 'utf8');
      if (content.includes('PRIVATE KEY-----')) certificates.push(`${path} sha256:${createHash('sha256').update(content).digest('hex').slice(0, 16)}\n`);
      else files.set(path, placed(content));
    }
    if (certificates.length > 0) files.set('certificates.txt', certificates.sort().join(''));
    return { code, files };
  } finally {
    await rm(input, { recursive: true, force: true });
    await rm(out, { recursive: true, force: true });
  }
}

/** The expected files of a case by path under expected/; empty when there are none yet. */
export async function expectedFiles(name: string): Promise<ReadonlyMap<string, string>> {
  const dir = join(CASES_DIR, name, 'expected');
  const paths = await filesUnder(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)));
  return new Map(await Promise.all(paths.map(async (path) => [path, await readFile(join(dir, path), 'utf8')] as const)));
}

/** Writes a case's expected files afresh (UPDATE_GOLDEN=1). */
export async function writeExpected(name: string, files: ReadonlyMap<string, string>): Promise<void> {
  const dir = join(CASES_DIR, name, 'expected');
  await rm(dir, { recursive: true, force: true });
  for (const [path, content] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** A unified diff per file that differs, is missing or is new; empty when the render is as expected. */
export function goldenDiff(expected: ReadonlyMap<string, string>, actual: ReadonlyMap<string, string>): string {
  const paths = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  const diffs: string[] = [];
  for (const path of paths) {
    const before = expected.get(path);
    const after = actual.get(path);
    if (before === undefined) diffs.push(`new file ${path} (not in expected/)\n${unifiedDiff('', after!, path)}`);
    else if (after === undefined) diffs.push(`missing file ${path} (no longer rendered)\n${unifiedDiff(before, '', path)}`);
    else if (before !== after) diffs.push(unifiedDiff(before, after, path));
  }
  return diffs.join('\n');
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}
