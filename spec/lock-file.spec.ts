import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from './chart/helm.ts';

/**
 * package-lock.json in step with package.json, so `npm ci` installs on a
 * fresh clone exactly what was tested here. Offline: nothing is fetched.
 */

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies: Readonly<Record<string, string>>;
  readonly devDependencies: Readonly<Record<string, string>>;
}

interface LockEntry {
  readonly name?: string;
  readonly version?: string;
  readonly integrity?: string;
  readonly link?: boolean;
  readonly inBundle?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

interface Lock {
  readonly name: string;
  readonly version: string;
  readonly lockfileVersion: number;
  readonly packages: Readonly<Record<string, LockEntry>>;
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

describe('package-lock.json', function () {
  this.timeout(30_000);
  let manifest: Manifest;
  let lock: Lock;
  before(async () => {
    manifest = JSON.parse(await readFile(join(projectRoot, 'package.json'), 'utf8')) as Manifest;
    lock = JSON.parse(await readFile(join(projectRoot, 'package-lock.json'), 'utf8')) as Lock;
  });

  it('pins every dependency to an exact version, and locks the project with those same versions', () => {
    const wanted = { ...manifest.dependencies, ...manifest.devDependencies };
    const loose = Object.entries(wanted).filter(([, version]) => !EXACT_VERSION.test(version));
    expect(loose, 'dependencies without an exact version').to.deep.equal([]);
    const root = lock.packages[''];
    expect({ name: lock.name, version: lock.version, lockfileVersion: lock.lockfileVersion }).to.deep.equal({ name: manifest.name, version: manifest.version, lockfileVersion: 3 });
    expect(root?.dependencies ?? {}, "the lock's dependencies (npm install rewrites the lock)").to.deep.equal(manifest.dependencies);
    expect(root?.devDependencies ?? {}, "the lock's devDependencies (npm install rewrites the lock)").to.deep.equal(manifest.devDependencies);
    const locked = Object.entries(wanted).filter(([name, version]) => lock.packages[`node_modules/${name}`]?.version !== version);
    expect(locked.map(([name, version]) => `${name}: package.json ${version}, lock ${lock.packages[`node_modules/${name}`]?.version ?? 'missing'}`)).to.deep.equal([]);
  });

  it('says what version every locked package is and what it must hash to', () => {
    // Bundled packages come inside their parent's tarball, checked with it.
    const unpinned = Object.entries(lock.packages).filter(
      ([path, entry]) => path !== '' && entry.link !== true && entry.inBundle !== true && (entry.version === undefined || entry.integrity === undefined),
    );
    expect(unpinned.map(([path]) => path)).to.deep.equal([]);
  });

  describe('npm ci on it, as on a fresh clone (dry run, offline, empty cache)', () => {
    let result: { code: number; output: string };
    before(async () => {
      const directory = await mkdtemp(join(tmpdir(), 'lock-file-'));
      try {
        for (const file of ['package.json', 'package-lock.json']) await copyFile(join(projectRoot, file), join(directory, file));
        // The npm running this suite when there is one (npm test sets npm_execpath), else the one on PATH.
        const npm = process.env['npm_execpath'];
        const [command, prefix] = npm !== undefined && npm.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []];
        // A dry run runs no script, but still lists the install scripts allowScripts does not cover.
        const args = [...prefix, 'ci', '--dry-run', '--offline', '--no-audit', '--no-fund', '--cache', join(directory, 'cache')];
        result = await new Promise((resolve) => {
          execFile(command, args, { cwd: directory, timeout: 25_000 }, (error, stdout, stderr) => {
            const code = (error as { code?: unknown } | null)?.code;
            resolve({ code: typeof code === 'number' ? code : error ? 1 : 0, output: `${stdout}${stderr}` });
          });
        });
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    it('accepts it as it is: nothing missing, nothing out of step', () => {
      const errors = result.output
        .split('\n')
        .filter((line) => line.startsWith('npm error'))
        .join('\n');
      expect(result.code, errors).to.equal(0);
    });

    // npm 11 runs a dependency's install script but warns unless package.json's allowScripts covers it
    // (npm help install-scripts); the node package's preinstall links the Node 24 binary the scripts run.
    it('prints no warning about an install script not covered by allowScripts', () => {
      const warnings = result.output.split('\n').filter((line) => line.startsWith('npm warn install-scripts'));
      expect(warnings).to.deep.equal([]);
    });
  });
});
