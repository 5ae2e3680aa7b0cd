import { expect } from 'chai';
import { copyFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotationsCommand } from '../../lib/cli/annotations-command.ts';
import type { CommandOutput } from '../../lib/cli/output.ts';
import { renderCommand } from '../../lib/cli/render-command.ts';
import { checkConfig } from '../../lib/haproxy/check.ts';
import { parseManifests } from '../../lib/kube/manifests.ts';
import type { KubeObject } from '../../lib/pipeline/model.ts';

/**
 * The corpus (spec/corpus/ingresses/, sources in spec/corpus/SOURCES.md):
 * Ingresses as public projects write them, each file run through the
 * `annotations` report and `render` as a user runs them, the rendered
 * configuration checked by the real `haproxy -c`. Prints what a migrating
 * user would get: annotations honoured, ignored, invalid and left out, and
 * the Ingresses served.
 */

const CORPUS = join(import.meta.dirname, 'ingresses');

function captured(): CommandOutput & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

const key = (object: KubeObject): string => `${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;

/**
 * Authentication this controller cannot give, told apart without its code:
 * external auth with an nginx variable in its URL, an auth-snippet, headers
 * from a ConfigMap or a method HAProxy's httpclient cannot send; client
 * certificates (unless verification is off); access rules in snippets.
 */
function asksUnservableAuth(object: KubeObject): boolean {
  const annotations = object.metadata.annotations ?? {};
  const nginx = (name: string) => annotations[`nginx.ingress.kubernetes.io/${name}`];
  const externalAuth = nginx('auth-url');
  if (externalAuth !== undefined && (externalAuth.includes('$') || nginx('auth-snippet') !== undefined || nginx('auth-proxy-set-headers') !== undefined)) return true;
  if (externalAuth !== undefined && /^(PATCH|CONNECT|OPTIONS|TRACE)$/.test(nginx('auth-method') ?? '')) return true;
  // Client certificates are served (issue 30), but for a match of the subject.
  if (nginx('auth-tls-secret') !== undefined && nginx('auth-tls-verify-client') !== 'off' && nginx('auth-tls-match-cn') !== undefined) return true;
  const snippets = Object.entries(annotations).filter(([name]) => name.endsWith('-snippet'));
  return snippets.some(([, value]) => /\b(deny|allow|auth_request|auth_basic)\s|return\s+403|http-request\s+deny/.test(value));
}

interface FileResult {
  readonly file: string;
  readonly ingresses: number;
  readonly served: number;
  readonly counts: readonly number[];
}

describe('corpus of public Ingresses, through annotations, render and haproxy -c', function () {
  this.timeout(180_000);
  const results: FileResult[] = [];
  let files: string[] = [];

  before(async () => {
    files = (await readdir(CORPUS)).filter((name) => name.endsWith('.yaml')).sort();
  });

  after(() => {
    if (results.length === 0) return;
    const total = results.reduce((sum, r) => ({ ingresses: sum.ingresses + r.ingresses, served: sum.served + r.served, counts: sum.counts.map((n, i) => n + r.counts[i]!) }), {
      ingresses: 0,
      served: 0,
      counts: [0, 0, 0, 0],
    });
    const width = Math.max(...results.map((r) => r.file.length), 'total'.length);
    const row = (file: string, ingresses: number | string, served: number | string, counts: readonly (number | string)[]) =>
      `  ${file.padEnd(width)}  ${String(ingresses).padStart(9)}  ${String(served).padStart(6)}  ${counts.map((n, i) => String(n).padStart([8, 7, 7, 8][i]!)).join('  ')}`;
    process.stdout.write(
      [
        '',
        `  Corpus summary: ${results.length} files, ${total.ingresses} Ingresses, ${total.served} served`,
        row('file', 'Ingresses', 'served', ['honoured', 'ignored', 'invalid', 'left out']),
        ...results.map((r) => row(r.file, r.ingresses, r.served, r.counts)),
        row('total', total.ingresses, total.served, total.counts),
        '',
      ].join('\n') + '\n',
    );
  });

  it('has at least 40 files, each with a source in SOURCES.md', async () => {
    expect(files.length).to.be.at.least(40);
    const sources = await readFile(join(CORPUS, '..', 'SOURCES.md'), 'utf8');
    for (const file of files) expect(sources, file).to.match(new RegExp(`^\\|\\s*\`${file.replaceAll('.', '\\.')}\`\\s*\\|`, 'm'));
  });

  it('reports and renders every file; each configuration passes haproxy -c, and no Ingress with authentication that cannot be served is served', async () => {
    for (const file of files) {
      const dir = await mkdtemp(join(tmpdir(), 'corpus-'));
      await copyFile(join(CORPUS, file), join(dir, file));
      const ingresses = parseManifests(await readFile(join(CORPUS, file), 'utf8'), file)
        .manifests.filter((m) => m.object.kind === 'Ingress')
        .map((m) => m.object);

      const report = captured();
      expect(await annotationsCommand({ manifests: dir }, report), `${file}: ${report.stderr.join('')}`).to.equal(0);
      const totalRow = /^total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$/m.exec(report.stdout.join(''));
      expect(totalRow, `${file}: the report's total row`).to.not.equal(null);

      const out = await mkdtemp(join(tmpdir(), 'corpus-out-'));
      const render = captured();
      const status = await renderCommand({ manifests: dir, out, config: undefined }, render);
      expect(status, `${file}: ${render.stderr.join('')}`).to.equal(0);
      const verdict = await checkConfig(join(out, 'haproxy.cfg'));
      expect(verdict.valid, `${file}: ${verdict.output}`).to.equal(true);

      const stderr = render.stderr.join('');
      const unserved = new Set([...stderr.matchAll(/^(?:excluded Ingress (\S+):|warning Ingress (\S+): not served)/gm)].map((match) => match[1] ?? match[2]!));
      for (const ingress of ingresses) {
        if (asksUnservableAuth(ingress)) expect([...unserved], `${file}: ${key(ingress)} asks for authentication that cannot be served`).to.include(key(ingress));
      }
      results.push({ file, ingresses: ingresses.length, served: ingresses.filter((ingress) => !unserved.has(key(ingress))).length, counts: totalRow!.slice(1).map(Number) });
    }
    expect(results).to.have.length(files.length);
  });

  it('renders the whole corpus as one configuration that haproxy -c accepts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'corpus-all-'));
    for (const file of files) await copyFile(join(CORPUS, file), join(dir, file));
    const out = await mkdtemp(join(tmpdir(), 'corpus-all-out-'));
    const render = captured();
    expect(await renderCommand({ manifests: dir, out, config: undefined }, render), render.stderr.join('')).to.equal(0);
    expect((await checkConfig(join(out, 'haproxy.cfg'))).valid).to.equal(true);
  });
});
