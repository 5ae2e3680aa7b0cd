import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../lib/cli/package-root.ts';

/**
 * Every benchmark `npm run bench` runs, run here at a tiny size, so a change
 * that breaks one (a setting renamed, a world the render now refuses) fails
 * a spec rather than the next person's benchmark run. Each must exit 0 and
 * print its last figures: no figure is judged, only that it got to the end.
 */

/** Per benchmark: the environment that shrinks it, and a line it prints at its end. */
const tiny: Record<string, { readonly env: Record<string, string>; readonly end: RegExp }> = {
  'render.ts': { env: { BENCH_SIZES: '20' }, end: /^target: one changed object applied to the stores/m },
  'gateway-render.ts': { env: { BENCH_GATEWAY_SIZES: '30' }, end: /^target: full render cold/m },
  'scale.ts': { env: { BENCH_SCALE_WORLDS: '20+5,100+20' }, end: /^target: a render after one change at 100 \+ 20/m },
  'request-cost.ts': {
    env: { BENCH_REQUEST_ROUTES: '40', BENCH_REQUEST_SECONDS: '0.1', BENCH_REQUEST_ROUNDS: '1', BENCH_REQUEST_CONNECTIONS: '2' },
    end: /^\| full world: external auth \|/m,
  },
  'quarantine.ts': { env: { BENCH_QUARANTINE_SIZE: '20' }, end: /^ {2}change fixing it/m },
  'latency.ts': { env: { BENCH_SAMPLES: '1', BENCH_DEPLOYMENT_INTERVAL: '100ms' }, end: /^target \(every endpoint, path and certificate change reload-free\)/m },
  'fanout.ts': { env: { BENCH_FLEET_SIZES: '1,2', BENCH_SAMPLES: '1' }, end: /^target, controller-side: 2 instances/m },
  'cold-start.ts': { env: { BENCH_SIZES: '20' }, end: /^\| +20 \| +\d+ \| +\d+ \| +-?\d+ \| +\d+ \|/m },
  'config-edit.ts': { env: { BENCH_CONFIG_EDIT_SIZES: '20', BENCH_CONFIG_EDITS: '1' }, end: /^target: a template edit handed to the Data Plane API in under 1 s/m },
  'webhook.ts': { env: { BENCH_SIZES: '20', BENCH_REVIEWS: '20' }, end: /^target: p99 below 100 ms at 20 Ingresses/m },
  'burst.ts': { env: { BENCH_BURST_EDITS: '20', BENCH_BURST_SECONDS: '2' }, end: /^target: at most 3 deployments per burst/m },
  'haproxy-versions.ts': { env: { BENCH_HAPROXY_SIZES: '5', BENCH_HAPROXY_RELOADS: '1' }, end: /^HAProxy versions: haproxy -c and reload/m },
  'change-to-served.ts': {
    env: { BENCH_SERVED_SIZES: '3,4', BENCH_SERVED_CHANGES: '2', BENCH_DEPLOYMENT_INTERVAL: '100ms' },
    end: /^target: a new backend \(a reload\) served within 1 s plus the reload at 4 Ingresses/m,
  },
};

async function benchmarks(): Promise<string[]> {
  const scripts = (JSON.parse(await readFile(join(packageRoot(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return [...(scripts['bench'] ?? '').matchAll(/\bnode bench\/(\S+\.ts)\b/g)].map((match) => match[1]!);
}

function run(file: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The Node running this spec (the project's own, through npm or npx), as `npm run bench` runs them.
    execFile(process.execPath, [join('bench', file)], { cwd: packageRoot(), env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run bench', function () {
  this.timeout(90_000);

  it('has a tiny size here for every benchmark it runs, and none for one it does not', async () => {
    expect(Object.keys(tiny).sort()).to.deep.equal((await benchmarks()).sort());
  });

  for (const [file, { env, end }] of Object.entries(tiny)) {
    it(`runs bench/${file} to the end at a tiny size`, async () => {
      const { code, stdout, stderr } = await run(file, env);
      expect(code, `bench/${file} exited with ${code}:\n${stderr.slice(-4_000)}`).to.equal(0);
      expect(stdout, `bench/${file} printed:\n${stdout.slice(-4_000)}`).to.match(end);
    });
  }
});
