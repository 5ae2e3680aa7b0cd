/**
 * HAProxy versions side by side: `haproxy -c` and reload times on the shipped
 * configuration rendered for BENCH_HAPROXY_SIZES Ingresses (1k, 5k, 10k), each with
 * its own Service and an EndpointSlice of 3 ready endpoints (world.ts), on
 * each of BENCH_HAPROXY_VERSIONS (2.6 and 3.2, provisioned by
 * .ci/provision-haproxy into its cache).
 *
 * The reload is the controller's own (lib/haproxy/master-reload.ts): a master
 * started on the files, then asked to reload BENCH_HAPROXY_RELOADS times, each
 * timed from the request to the new worker serving (2.6: `show proc` shows
 * it; 3.x: the master's `Success=1`). Where HAProxy cannot start (10k
 * Ingresses are 30k servers with checks, each check a descriptor: more than
 * a container's open-file limit may allow), the reload is left out and the
 * table says why. Medians; informational, never a pass or fail.
 *
 * Run with `node bench/haproxy-versions.ts` (part of `npm run bench`).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import type { ControllerConfig } from '../lib/config/types.ts';
import { checkConfig } from '../lib/haproxy/check.ts';
import { MasterProcess } from '../lib/haproxy/master-process.ts';
import { reloadMaster } from '../lib/haproxy/master-reload.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { writeRenderedFiles } from '../lib/render/write-files.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { reservePort } from '../spec/support/ports.ts';
import { median, milliseconds } from './timing.ts';
import { endpointSliceObject, ingressObject, serviceObject } from './world.ts';

const LOOPBACK = '127.0.0.1';

export interface VersionRow {
  readonly version: string;
  readonly size: number;
  readonly checkMs: number;
  /** Undefined when HAProxy cannot start on it here (the open-file limit: each server's check takes a descriptor). */
  readonly reloadMs: number | undefined;
  readonly reloadNote?: string;
}

/** The binary of a supported HAProxy minor, from the provisioning cache (provisioned once when missing). */
export function provisionedBinary(minor: string): Promise<string> {
  const script = fileURLToPath(new URL('../.ci/provision-haproxy', import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(script, [minor], { timeout: 600_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`.ci/provision-haproxy ${minor} failed: ${stderr.trim() || error.message}`));
      resolve(stdout.trim().split('\n').at(-1)!);
    });
  });
}

/** Renders `size` Ingresses with the shipped configuration into `dir`, to be served on loopback ports. */
async function renderWorld(loaded: ControllerConfig, size: number, dir: string): Promise<string> {
  const config: ControllerConfig = {
    ...loaded,
    templateValues: {
      ...loaded.templateValues,
      bindAddress: LOOPBACK,
      httpPort: await reservePort(LOOPBACK),
      httpsPort: await reservePort(LOOPBACK),
      statusPort: await reservePort(LOOPBACK),
      runtimeSocket: join(dir, 'stats.sock'),
    },
  };
  const range = Array.from({ length: size }, (_, i) => i);
  const objects = new Map([
    ['ingresses', range.map((i) => ingressObject(i, 1, false))],
    ['services', range.map(serviceObject)],
    ['endpointslices', range.map((i) => endpointSliceObject(i))],
    ['secrets', []],
  ]);
  const output = createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, objects, config.ignoreFields), baseDir: dir });
  if (output.excluded.length > 0) throw new Error(`${size} Ingresses: ${output.excluded.length} objects excluded, e.g. ${JSON.stringify(output.excluded[0])}`);
  return writeRenderedFiles(dir, output.files, config.dataplane);
}

/** `haproxy -c` and reload medians of one binary on one size. */
export async function measureVersion(loaded: ControllerConfig, version: string, binary: string, size: number, runs: { checks: number; reloads: number }): Promise<VersionRow> {
  const dir = await mkdtemp(join(tmpdir(), `haproxy-versions-${version}-${size}-`));
  const master = new MasterProcess({ workDir: dir, binary, timeoutMs: 120_000 });
  try {
    const configFile = await renderWorld(loaded, size, dir);
    const checks: number[] = [];
    for (let run = 0; run < runs.checks; run++) {
      const start = process.hrtime.bigint();
      const result = await checkConfig(configFile, binary);
      checks.push(milliseconds(start));
      if (!result.valid) throw new Error(`HAProxy ${version} refuses the ${size}-Ingress configuration:\n${result.output}`);
    }
    try {
      await master.start();
    } catch (error) {
      const message = (error as Error).message;
      // 10k Ingresses are 30k servers with checks: more descriptors than a container's limit often allows.
      if (!/Cannot raise FD limit/.test(message)) throw error;
      return { version, size, checkMs: median(checks), reloadMs: undefined, reloadNote: message.replace(/^.*\] /s, '') };
    }
    const reloads: number[] = [];
    for (let run = 0; run < runs.reloads; run++) {
      const start = process.hrtime.bigint();
      const outcome = await reloadMaster(master);
      reloads.push(milliseconds(start));
      if (!outcome.loaded) throw new Error(`HAProxy ${version} refused a reload of the ${size}-Ingress configuration: ${outcome.message}`);
    }
    return { version, size, checkMs: median(checks), reloadMs: median(reloads) };
  } finally {
    await master.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The shipped controller configuration. */
export function shippedConfig(): { readonly config: ControllerConfig } {
  const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
  if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
  return loaded;
}

export function versionTable(rows: readonly VersionRow[]): string {
  const sizes = [...new Set(rows.map((row) => row.size))];
  const versions = [...new Set(rows.map((row) => row.version))];
  const header = ['ingresses', ...versions.flatMap((version) => [`${version} haproxy -c ms`, `${version} reload ms`])];
  const lines = sizes.map((size) => [
    String(size),
    ...versions.flatMap((version) => {
      const row = rows.find((candidate) => candidate.size === size && candidate.version === version);
      return row ? [row.checkMs.toFixed(0), row.reloadMs === undefined ? '-' : row.reloadMs.toFixed(0)] : ['-', '-'];
    }),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const notes = [...new Set(rows.flatMap((row) => (row.reloadNote === undefined ? [] : [`- ${row.version} at ${row.size}: HAProxy does not start here: ${row.reloadNote}`])))];
  return [...[header, ...lines].map((line) => line.map((cell, column) => cell.padStart(widths[column]!)).join('  ')), ...notes].join('\n');
}

async function main(): Promise<void> {
  const sizes = (process.env['BENCH_HAPROXY_SIZES'] ?? '1000,5000,10000').split(',').map(Number);
  const versions = (process.env['BENCH_HAPROXY_VERSIONS'] ?? '2.6,3.2').split(',');
  const reloads = Number(process.env['BENCH_HAPROXY_RELOADS'] ?? 3);
  const loaded = shippedConfig();
  const rows: VersionRow[] = [];
  // HAProxyProcess leaves its child unreferenced (it is made for mocha, which keeps the process alive): a
  // referenced timer keeps this script alive while a master is stopped, as bench/request-cost.ts does.
  const alive = setInterval(() => undefined, 1_000);
  try {
    for (const version of versions) {
      const binary = await provisionedBinary(version);
      for (const size of sizes) rows.push(await measureVersion(loaded.config, version, binary, size, { checks: 3, reloads }));
    }
  } finally {
    clearInterval(alive);
  }
  process.stdout.write(`HAProxy versions: haproxy -c and reload (request to new worker serving), medians\n${versionTable(rows)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
