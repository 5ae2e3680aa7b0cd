import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { load } from 'js-yaml';
import { haproxyBinary } from '../../lib/haproxy/check.ts';
import { execForm, parseDockerfile, type Dockerfile, type Stage } from './dockerfile.ts';
import { chartDirectory, projectRoot } from './helm.ts';

/**
 * The container image, checked as far as a machine without Docker allows:
 * the Dockerfile's stages, user, entry point and versions are read and
 * compared with the chart and the project; its build runs on a context cut
 * by .dockerignore; the compiled CLI runs with the production dependencies
 * only, laid out as the image lays them out.
 */

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (error && typeof code !== 'number') return reject(error);
      resolve({ code: typeof code === 'number' ? code : 0, stdout, stderr });
    });
  });
}

function stage(dockerfile: Dockerfile, name: string): Stage {
  const found = dockerfile.stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`the Dockerfile has no stage ${name}`);
  return found;
}

function runs(s: Stage): string[] {
  return s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.text);
}

/** The build-context paths .dockerignore lets through (it is an allow-list: `*`, then `!name` lines). */
function allowedByDockerignore(text: string): string[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines[0] !== '*') throw new Error('.dockerignore must start by excluding everything (*)');
  return lines.slice(1).map((line) => {
    if (!line.startsWith('!')) throw new Error(`.dockerignore: expected an exception (!name), got ${line}`);
    return line.slice(1);
  });
}

/** node_modules/<name> entries of the lock file npm ci --omit=dev keeps. */
function productionPackages(lock: { packages: Record<string, { dev?: boolean }> }): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && entry.dev !== true)
    .map(([path]) => path.slice('node_modules/'.length));
}

describe('the container image', function () {
  this.timeout(60_000);
  let dockerfile: Dockerfile;
  let allowed: string[];
  before(async () => {
    dockerfile = parseDockerfile(await readFile(join(projectRoot, 'Dockerfile'), 'utf8'));
    allowed = allowedByDockerignore(await readFile(join(projectRoot, '.dockerignore'), 'utf8'));
  });

  describe('Dockerfile', () => {
    it('builds in stages on Node 24 slim (Debian trixie, the base of the HAProxy image it takes haproxy from)', () => {
      expect(dockerfile.stages.map((s) => s.name)).to.deep.equal(['haproxy', 'build', 'production-dependencies', 'runtime']);
      expect(stage(dockerfile, 'haproxy').from).to.equal('${HAPROXY_IMAGE}');
      for (const node of dockerfile.stages.filter((candidate) => candidate.name !== 'haproxy')) expect(node.from, node.name).to.equal('${NODE_IMAGE}');
      expect(dockerfile.globalArgs['NODE_IMAGE']).to.match(/^node:24(\.\d+)*-trixie-slim$/);
    });

    it('installs with npm ci (the lock file as it is, never npm install), production dependencies only for the image, and builds with npm run build', () => {
      const all = dockerfile.stages.flatMap(runs).join('\n');
      expect(all).to.not.match(/npm (install|i)\b/);
      expect(runs(stage(dockerfile, 'build')).some((r) => /^npm ci\b/.test(r))).to.equal(true);
      expect(runs(stage(dockerfile, 'production-dependencies')).some((r) => /^npm ci .*--omit=dev/.test(r))).to.equal(true);
      expect(runs(stage(dockerfile, 'build'))).to.include('npm run build');
    });

    it('copies into the runtime the HAProxy image’s haproxy, the compiled controller, production node_modules, package.json and templates only', () => {
      const copies = stage(dockerfile, 'runtime')
        .instructions.filter((i) => i.keyword === 'COPY')
        .map((i) => i.text);
      expect(copies).to.deep.equal([
        '--from=haproxy /usr/local/sbin/haproxy /usr/sbin/haproxy',
        '--from=production-dependencies /app/node_modules node_modules',
        'package.json ./',
        'templates templates',
        '--from=build /build/dist dist',
      ]);
    });

    it('copies nothing from the build context that .dockerignore leaves out', () => {
      for (const s of dockerfile.stages) {
        for (const copy of s.instructions.filter((i) => i.keyword === 'COPY' && !i.text.startsWith('--from'))) {
          const sources = copy.text.split(/\s+/).slice(0, -1);
          for (const source of sources) expect(allowed, `${s.name}: COPY ${copy.text}`).to.include(source);
        }
      }
    });

    it('runs as a non-root user, the one the chart runs the controller as', async () => {
      const values = load(await readFile(join(chartDirectory, 'values.yaml'), 'utf8')) as { controller: { podSecurityContext: { runAsUser: number; runAsGroup: number } } };
      const user = stage(dockerfile, 'runtime')
        .instructions.filter((i) => i.keyword === 'USER')
        .at(-1)?.text;
      const { runAsUser, runAsGroup } = values.controller.podSecurityContext;
      expect(user).to.equal(`${runAsUser}:${runAsGroup}`);
      expect(runAsUser).to.be.greaterThan(0);
    });

    it('starts the compiled CLI under tini, which forwards SIGTERM, with TMPDIR on the volume the chart mounts', () => {
      const runtime = stage(dockerfile, 'runtime');
      expect(execForm(runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT'))).to.deep.equal(['/usr/bin/tini', '-g', '--', '/usr/local/bin/node', '/app/dist/streams/main.js']);
      expect(execForm(runtime.instructions.find((i) => i.keyword === 'CMD'))).to.deep.equal(['run']);
      const env = runtime.instructions
        .filter((i) => i.keyword === 'ENV')
        .map((i) => i.text)
        .join(' ');
      expect(env).to.include('TMPDIR=/tmp').and.include('HAPROXY_BIN=/usr/sbin/haproxy');
      expect(runs(runtime).join('\n')).to.match(/apt-get install .*\btini\b/);
    });

    it('validates with the haproxy of the chart HAProxy image, whose major.minor the specs validate with too', async () => {
      const values = load(await readFile(join(chartDirectory, 'values.yaml'), 'utf8')) as { haproxy: { image: { repository: string; tag: string } } };
      expect(dockerfile.globalArgs['HAPROXY_IMAGE']).to.equal(`${values.haproxy.image.repository}:${values.haproxy.image.tag}`);
      const chartMinor = /^(\d+\.\d+)\./.exec(values.haproxy.image.tag)?.[1];
      const arg = stage(dockerfile, 'runtime').instructions.find((i) => i.keyword === 'ARG' && i.text.startsWith('HAPROXY_VERSION='));
      expect(arg?.text).to.equal(`HAPROXY_VERSION=${chartMinor}`);
      expect(runs(stage(dockerfile, 'runtime')).join('\n')).to.include('haproxy -v | grep -q "version ${HAPROXY_VERSION}\\."');
      const local = await run(haproxyBinary(), ['-v'], projectRoot);
      expect(local.stdout).to.match(new RegExp(`version ${chartMinor!.replace('.', '\\.')}\\.`));
    });
  });

  describe('build', () => {
    let work: string;
    let app: string;
    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'image-build-'));
      const context = join(work, 'context');
      app = join(work, 'app');
      // The build stage's inputs: what .dockerignore lets into the context.
      for (const path of allowed) await cp(join(projectRoot, path), join(context, path), { recursive: true });
      const modules = await realpath(join(projectRoot, 'node_modules'));
      await symlink(modules, join(context, 'node_modules'));
      const packageJson = JSON.parse(await readFile(join(context, 'package.json'), 'utf8')) as { scripts: { build: string } };
      expect(packageJson.scripts.build).to.equal('tsc -p tsconfig.build.json');
      const built = await run(process.execPath, [join(modules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], context);
      expect(built.code, built.stdout + built.stderr).to.equal(0);
      // The runtime stage's layout, with only the packages npm ci --omit=dev keeps.
      await mkdir(join(app, 'node_modules'), { recursive: true });
      await cp(join(context, 'dist'), join(app, 'dist'), { recursive: true });
      await cp(join(context, 'templates'), join(app, 'templates'), { recursive: true });
      await cp(join(context, 'package.json'), join(app, 'package.json'));
      const lock = JSON.parse(await readFile(join(context, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
      for (const name of productionPackages(lock)) {
        await mkdir(dirname(join(app, 'node_modules', name)), { recursive: true });
        await symlink(join(modules, name), join(app, 'node_modules', name));
      }
    });
    after(async () => {
      await rm(work, { recursive: true, force: true });
    });

    // --preserve-symlinks: packages resolve their imports from the image's node_modules, not the project's.
    const cli = (args: readonly string[]) => run(process.execPath, ['--preserve-symlinks', join(app, 'dist', 'streams', 'main.js'), ...args], app);

    it('compiles the controller into dist/, which runs version with production dependencies only', async () => {
      const result = await cli(['version']);
      expect(result.code, result.stderr).to.equal(0);
      const { version } = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
      expect(result.stdout).to.equal(`${version}\n`);
    });

    it("runs the shipped configuration's validationTests from the image layout", async () => {
      const result = await cli(['validate']);
      expect(result.code, result.stdout + result.stderr).to.equal(0);
      expect(result.stdout).to.match(/\d+ passed, 0 failed/);
    });

    it('leaves development dependencies out of the runtime node_modules', async () => {
      const lock = JSON.parse(await readFile(join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
      const kept = productionPackages(lock);
      expect(kept).to.include.members(['rxjs', 'pino', 'chokidar']);
      // The controller speaks to the API server with a client of its own (lib/kube): client-node is the specs' reference client.
      expect(kept).to.not.include.members(['typescript', 'mocha', 'kubernetes-models', 'node', '@kubernetes/client-node', 'undici']);
    });
  });
});
