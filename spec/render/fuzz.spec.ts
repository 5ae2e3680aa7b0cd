import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath } from '../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../lib/config/load.ts';
import type { ControllerConfig } from '../../lib/config/types.ts';
import { checkConfig } from '../../lib/haproxy/check.ts';
import { describeObject } from '../../lib/object-fields/names.ts';
import { selectionFor } from '../../lib/kube/select.ts';
import type { KubeObject, Problem } from '../../lib/pipeline/model.ts';
import { createRenderer, type Renderer, type RenderOutput } from '../../lib/render/renderer.ts';
import { routingViews } from '../../lib/routing-view/routing-view.ts';
import { objectLabel } from '../../lib/render/resource-views.ts';
import { renderedFilePaths, writeRenderedFiles } from '../../lib/render/write-files.ts';
import { buildStores } from '../../lib/store/build-stores.ts';
import { formatPath, hostileValue, MARKER, parseFieldPath, Random, replaceLeaf, scalarLeaves, type Leaf } from '../support/fuzz-values.ts';
import { LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';
import { backend, endpointSlice, ingress, path, rule, service, tlsSecret } from '../lib/ingress/fixtures.ts';

/**
 * Hostile strings in every field of the objects the shipped configuration
 * reads. Each iteration replaces one field of one object of a valid world
 * and renders it with the shipped templates; the render must either leave
 * the object (or the part of it at fault) out with a Problem naming it, or
 * come out exactly as if the field held a harmless value of its own. Either
 * way no line may appear that no valid world renders, no hostile fragment
 * may reach a file, and `haproxy -c` must accept the result.
 *
 * Deterministic: fixed seeds, each covering its own slice of the fields
 * (together every field at least once). FUZZ_SEEDS=3,7 reruns given seeds;
 * FUZZ_ITERATIONS=100 runs more iterations per seed.
 */

const SEEDS = process.env['FUZZ_SEEDS']?.split(',').map(Number) ?? [1, 2, 3, 4, 5, 6, 7, 8];
const ITERATIONS_PER_SEED = Number(process.env['FUZZ_ITERATIONS'] ?? 25);
/** Failures listed per seed before the rest are counted only; one is enough to reproduce. */
const MAX_REPORTED = 5;

interface WorldEntry {
  /** The kind error messages use; the object's own `kind` is a field like any other and may be fuzzed. */
  readonly kind: string;
  readonly object: KubeObject;
}

function withMetadata(object: KubeObject, extra: Record<string, unknown>): KubeObject {
  return { ...object, metadata: { ...object.metadata, ...extra } };
}

/** Fields real objects carry that the shipped templates never read: fuzzing them must change nothing. */
function withStatus(object: KubeObject, status: Record<string, unknown>): KubeObject {
  return { ...object, status };
}

function withSpec(object: KubeObject, extra: Record<string, unknown>): KubeObject {
  return { ...object, spec: { ...(object['spec'] as Record<string, unknown>), ...extra } };
}

/** What the EndpointSlice controller fills in next to addresses. */
function withEndpointDetails(slice: KubeObject): KubeObject {
  const endpoints = (slice['endpoints'] as Record<string, unknown>[]).map((endpoint, index) => ({
    ...endpoint,
    nodeName: `node-${index}`,
    zone: 'zone-a',
    targetRef: { kind: 'Pod', namespace: slice.metadata.namespace, name: `${slice.metadata.name}-pod-${index}`, uid: `uid-pod-${index}` },
  }));
  return { ...slice, endpoints };
}

/**
 * Small, so haproxy -c stays fast, yet reaching every branch of the shipped
 * templates: exact, wildcard-free and host-less rules, Exact, Prefix and
 * ImplementationSpecific paths, named and numeric ports, a default backend,
 * two TLS entries sharing one Secret, IPv4 and IPv6 endpoints, an endpoint
 * that is not ready, the class given by field and by annotation.
 */
function baselineWorld(): WorldEntry[] {
  const shop = ingress('shop', {
    created: '2024-01-01T00:00:00Z',
    tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
    rules: [rule('shop.example.com', path('/', 'web', 'http'), path('/api/v1', 'api', 8080, 'Exact'))],
  });
  const webSlice = endpointSlice(
    'web-1',
    'web',
    [{ name: 'http', port: 8081 }],
    [
      { addresses: ['10.0.0.1'], ready: true },
      { addresses: ['10.0.0.2'], ready: false },
    ],
  );
  const apiSlice = endpointSlice(
    'api-1',
    'api',
    [
      { name: 'rest', port: 18080 },
      { name: 'grpc', port: 9090 },
    ],
    [{ addresses: ['10.0.1.1', '10.0.1.2'], ready: true }],
  );
  return [
    {
      kind: 'Ingress',
      object: withStatus(withMetadata(shop, { labels: { app: 'shop' }, annotations: { 'example.com/owner': 'team-a' } }), {
        loadBalancer: { ingress: [{ ip: '203.0.113.10', hostname: 'lb.example.com' }] },
      }),
    },
    {
      kind: 'Ingress',
      object: ingress('admin', {
        created: '2024-01-02T00:00:00Z',
        className: null,
        annotationClass: 'haproxy',
        tls: [{ hosts: ['admin.example.com'], secretName: 'shop-tls' }],
        rules: [rule('admin.example.com', path('/console', 'web', 'http', 'ImplementationSpecific'))],
      }),
    },
    {
      kind: 'Ingress',
      object: ingress('fallback', {
        created: '2024-01-03T00:00:00Z',
        defaultBackend: backend('api', 8080),
        rules: [rule(undefined, path('/static', 'web', 'http'))],
      }),
    },
    {
      kind: 'Ingress',
      object: ingress('store', {
        namespace: 'team-b',
        created: '2024-01-04T00:00:00Z',
        rules: [rule('b.example.com', path('/', 'app', 'web'))],
      }),
    },
    {
      kind: 'Service',
      object: withSpec(service('web', [{ name: 'http', port: 80, targetPort: 'web-http' }]), {
        clusterIP: '10.96.0.10',
        sessionAffinity: 'None',
      }),
    },
    {
      kind: 'Service',
      object: service('api', [
        { name: 'rest', port: 8080, targetPort: 18080 },
        { name: 'grpc', port: 9090 },
      ]),
    },
    { kind: 'Service', object: service('app', [{ name: 'web', port: 80, targetPort: 8080 }], 'team-b') },
    { kind: 'EndpointSlice', object: withEndpointDetails(webSlice) },
    { kind: 'EndpointSlice', object: apiSlice },
    {
      kind: 'EndpointSlice',
      object: endpointSlice('app-1', 'app', [{ name: 'web', port: 8080 }], [{ addresses: ['fd00::10'] }], {
        namespace: 'team-b',
        addressType: 'IPv6',
      }),
    },
    { kind: 'Secret', object: tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY) },
  ];
}

/** One iteration's field: an object of the world and a leaf in it. */
interface Target {
  readonly entry: number;
  readonly leaf: Leaf;
}

function allTargets(world: readonly WorldEntry[]): Target[] {
  return world.flatMap((item, entry) => scalarLeaves(item.object).map((leaf) => ({ entry, leaf })));
}

/**
 * A valid value for the field, different from the original, that no check
 * refuses for its characters: where the hostile value is not refused it must
 * behave like this one (a name that matches nothing, a type that selects
 * nothing...). Paths need their leading '/'.
 */
function benignValue(leaf: Leaf): string {
  const last = leaf.path.at(-1);
  return !leaf.isKey && last === 'path' ? '/fuzzbenign' : 'fuzzbenign';
}

/** Renders a world as the `render` command would: selection per watched resource, stores, shipped templates. */
function renderWorld(config: ControllerConfig, renderer: Renderer, objects: readonly KubeObject[], baseDir: string): RenderOutput {
  const byResource = new Map<string, KubeObject[]>();
  for (const resource of config.watchedResources) byResource.set(resource.name, objects.filter(selectionFor(resource)));
  return renderer({ stores: buildStores(config.watchedResources, byResource, config.ignoreFields), baseDir });
}

/** Every output file by its path relative to the base directory (haproxy.cfg, maps/host.map, ...). */
function filesOf(config: ControllerConfig, output: RenderOutput): Map<string, string> {
  return renderedFilePaths('', output.files, config.dataplane);
}

function linesOf(content: string): string[] {
  return content.split('\n').filter((line) => line.trim() !== '');
}

/** haproxy.cfg as section keywords, each with the first word of its lines in order. */
type Shape = readonly (readonly [string, readonly string[]])[];

function configShape(config: string): Shape {
  const sections: [string, string[]][] = [];
  for (const line of linesOf(config)) {
    const word = line.trim().split(/\s+/)[0]!;
    if (!/^\s/.test(line)) sections.push([word, []]);
    else if (sections.length === 0) sections.push(['', [word]]);
    else sections.at(-1)![1].push(word);
  }
  return sections;
}

function sameShape(a: Shape, b: Shape): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether `shape` only lacks things of `full`: its sections in order among
 * full's, each keeping a subsequence of that section's directives. Leaving
 * an object out may drop lines, never add any.
 */
function isSubShape(shape: Shape, full: Shape): boolean {
  let at = 0;
  for (const [keyword, words] of shape) {
    while (at < full.length && !(full[at]![0] === keyword && isSubsequence(words, full[at]![1]))) at++;
    if (at === full.length) return false;
    at++;
  }
  return true;
}

function isSubsequence(items: readonly string[], of: readonly string[]): boolean {
  let at = 0;
  for (const item of items) {
    while (at < of.length && of[at] !== item) at++;
    if (at === of.length) return false;
    at++;
  }
  return true;
}

function count(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

function show(value: string, limit = 160): string {
  const text = JSON.stringify(value);
  return text.length > limit ? `${text.slice(0, limit)}...(${value.length} chars)` : text;
}

const HOST_TOKEN = /^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;
const PEM_LINE = /^(-----(BEGIN|END) [A-Z ]+-----|[A-Za-z0-9+/=]{1,64})$/;

/** Format rules each kind of output file must follow whatever the objects hold. */
function formatIssues(config: ControllerConfig, files: ReadonlyMap<string, string>, certificates: readonly string[]): string[] {
  const issues: string[] = [];
  const { mapsDir, certificatesDir, generalDir } = config.dataplane;
  for (const [file, content] of files) {
    if (content !== '' && !content.endsWith('\n')) issues.push(`${file} does not end with a newline`);
    if (/[^\n\x20-\x7e]/.test(content)) issues.push(`${file} holds a character outside printable ASCII: ${show(content)}`);
    const lines = linesOf(content);
    if (file.startsWith(`${mapsDir}/`)) {
      for (const line of lines) if (!/^[!-~]+ [!-~]+$/.test(line)) issues.push(`${file}: not two words: ${show(line)}`);
    } else if (file === `${generalDir}/crt-list.txt`) {
      for (const line of lines) {
        const [certificate, ...hosts] = line.split(' ');
        if (!certificates.includes(certificate!)) issues.push(`${file}: names no rendered certificate: ${show(line)}`);
        if (!hosts.every((host) => HOST_TOKEN.test(host))) issues.push(`${file}: a token is not a host: ${show(line)}`);
      }
    } else if (file.startsWith(`${certificatesDir}/`)) {
      for (const line of lines) if (!PEM_LINE.test(line)) issues.push(`${file}: not a PEM line: ${show(line)}`);
    }
  }
  return issues;
}

/** Fragments of a payload that must never reach a file, counted against what the valid world already has. */
function leakIssues(files: ReadonlyMap<string, string>, baseline: ReadonlyMap<string, string>): string[] {
  const issues: string[] = [];
  for (const [file, content] of files) {
    const before = baseline.get(file) ?? '';
    for (const fragment of [MARKER, 'lua-load', '${', '%[', '\r', '\0']) {
      if (count(content, fragment) > count(before, fragment)) issues.push(`${file} gained ${show(fragment)}`);
    }
  }
  return issues;
}

/**
 * Lines no reference render has: the render added something. Lines of only
 * blanks count too, since a value that added one could add anything.
 */
function novelLines(files: ReadonlyMap<string, string>, references: readonly ReadonlyMap<string, string>[]): string[] {
  const issues: string[] = [];
  const nonEmpty = (content: string) => content.split('\n').filter((line) => line !== '');
  for (const [file, content] of files) {
    const known = new Set(references.flatMap((reference) => nonEmpty(reference.get(file) ?? '')));
    for (const line of nonEmpty(content)) if (!known.has(line)) issues.push(`${file}: unexpected line ${show(line)}`);
  }
  return issues;
}

/** Whether a Problem's field and the fuzzed field are the same, or one contains the other. */
function relatedFields(problemField: string, leaf: Leaf): boolean {
  const problem = parseFieldPath(problemField);
  // A renamed key leaves its old name missing, which the Problem names under the parent.
  const fuzzed = (leaf.isKey ? leaf.path.slice(0, -1) : leaf.path).map(String);
  const length = Math.min(problem.length, fuzzed.length);
  return length > 0 && problem.slice(0, length).every((segment, i) => segment === fuzzed[i]);
}

describe('rendering hostile values with the shipped configuration (fuzz)', function () {
  // haproxy -c runs once per iteration.
  this.timeout(60_000);

  let config: ControllerConfig;
  let renderer: Renderer;
  let root: string;
  let baseDir: string;
  let world: WorldEntry[];
  let targets: Target[];
  let baselineFiles: Map<string, string>;

  before(async () => {
    const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
    if (!loaded.ok) throw new Error(`the shipped configuration does not load:\n${loaded.errors.join('\n')}`);
    config = loaded.config;
    renderer = createRenderer(config, routingViews);
    root = await mkdtemp(join(tmpdir(), 'haproxy-fuzz-'));
    // One directory for every render: the config names it (default-path origin), so renders compare line by line.
    baseDir = join(root, 'out');
    world = baselineWorld();
    targets = allTargets(world);
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const check = async (output: RenderOutput): Promise<{ valid: boolean; output: string }> => {
    await rm(baseDir, { recursive: true, force: true });
    await mkdir(baseDir, { recursive: true });
    return checkConfig(await writeRenderedFiles(baseDir, output.files, config.dataplane));
  };

  it('renders the valid world in full, with no Problem, and haproxy -c accepts it', async () => {
    const output = renderWorld(
      config,
      renderer,
      world.map((item) => item.object),
      baseDir,
    );
    const problems = [...output.excluded, ...output.warnings].map((p) => `${p.object}: ${p.field}: ${p.message}`);
    if (problems.length > 0) throw new Error(`the baseline world has problems:\n${problems.join('\n')}`);
    baselineFiles = filesOf(config, output);
    const cfg = output.files.config;
    // The world must reach every part of the templates, or fuzzing it proves less than it seems.
    for (const expected of ['ssl crt-list', 'backend default_web_80', 'backend default_api_8080', 'backend team-b_app_80', 'server srv-fd00__10-8080']) {
      if (!cfg.includes(expected)) throw new Error(`the baseline haproxy.cfg lacks ${JSON.stringify(expected)}:\n${cfg}`);
    }
    if (!cfg.includes('default_backend default_api_8080')) throw new Error('the baseline has no default backend from an Ingress');
    const crtList = baselineFiles.get(`${config.dataplane.generalDir}/crt-list.txt`);
    if (crtList !== 'ssl/default_shop-tls.pem admin.example.com shop.example.com\n') throw new Error(`unexpected crt-list: ${crtList}`);
    const issues = formatIssues(
      config,
      baselineFiles,
      Object.keys(output.files.certificates).map((f) => `${config.dataplane.certificatesDir}/${f}`),
    );
    if (issues.length > 0) throw new Error(issues.join('\n'));
    const result = await check(output);
    if (!result.valid) throw new Error(`haproxy -c refuses the baseline:\n${result.output}`);
    if (targets.length > SEEDS.length * ITERATIONS_PER_SEED && !process.env['FUZZ_SEEDS']) {
      throw new Error(`${targets.length} fields but only ${SEEDS.length * ITERATIONS_PER_SEED} iterations: some field is never fuzzed`);
    }
  });

  for (const seed of SEEDS) {
    it(`excludes or neutralises every hostile value (seed ${seed})`, async () => {
      if (!baselineFiles) throw new Error('the baseline render failed; see the test above');
      const random = new Random(seed);
      const failures: string[] = [];
      let failed = 0;
      const baselineShape = configShape(baselineFiles.get('haproxy.cfg')!);
      for (let iteration = 0; iteration < ITERATIONS_PER_SEED; iteration++) {
        const target = targets[((seed - 1) * ITERATIONS_PER_SEED + iteration) % targets.length]!;
        const item = world[target.entry]!;
        const payload = hostileValue(random, target.leaf);
        const mutated = replaceLeaf(item.object, target.leaf, payload);
        const withObject = (object: KubeObject | undefined) => world.flatMap((other, i) => (i !== target.entry ? [other.object] : object ? [object] : []));
        const issues = await fuzzOnce(
          mutated,
          item.kind,
          target.leaf,
          {
            mutated: () => renderWorld(config, renderer, withObject(mutated), baseDir),
            benign: () => renderWorld(config, renderer, withObject(replaceLeaf(item.object, target.leaf, benignValue(target.leaf))), baseDir),
            removed: () => renderWorld(config, renderer, withObject(undefined), baseDir),
          },
          baselineShape,
        );
        if (issues.length === 0) continue;
        failed++;
        if (failures.length < MAX_REPORTED) {
          const where = `${item.kind} ${item.object.metadata.namespace}/${item.object.metadata.name} ${formatPath(target.leaf.path)}`;
          const what = target.leaf.isKey ? 'key renamed to' : '=';
          failures.push(
            `seed ${seed} iteration ${iteration}: ${where} ${what} ${typeof payload === 'string' ? show(payload, 300) : `${JSON.stringify(payload)} (not a string)`}\n    ${issues.join('\n    ')}`,
          );
        }
      }
      if (failed > 0) {
        const rerun = `rerun with FUZZ_SEEDS=${seed} FUZZ_ITERATIONS=${ITERATIONS_PER_SEED}`;
        throw new Error(`${failed} of ${ITERATIONS_PER_SEED} iterations failed (${rerun}):\n${failures.join('\n')}`);
      }
    });
  }

  interface Renders {
    readonly mutated: () => RenderOutput;
    readonly benign: () => RenderOutput;
    readonly removed: () => RenderOutput;
  }

  /** Everything wrong with one mutated render; empty when it is right. */
  async function fuzzOnce(object: KubeObject, kind: string, leaf: Leaf, renders: Renders, baselineShape: Shape): Promise<string[]> {
    let output: RenderOutput;
    try {
      output = renders.mutated();
    } catch (error) {
      // A RenderError here means the view model handed the templates a value the safe writer refused.
      return [`the render threw: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
    }
    const benign = renders.benign();
    const files = filesOf(config, output);
    const benignFiles = filesOf(config, benign);
    const issues: string[] = [];

    const labels = new Set([describeObject(kind, object.metadata.namespace, object.metadata.name), objectLabel(kind, object)]);
    const naming = [...output.excluded, ...output.warnings].filter((problem: Problem) => labels.has(problem.object));
    for (const problem of naming) {
      if (problem.field === '' || problem.message === '') issues.push(`a Problem names the object without field or message: ${JSON.stringify(problem)}`);
    }
    const named = naming.some((problem) => problem.field !== '' && problem.message !== '' && relatedFields(problem.field, leaf));
    if (naming.length > 0 && !named) {
      issues.push(`Problems name the object but not the fuzzed field: ${naming.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
    }

    // (a) Left out with a named error, dropping lines only; or shaped exactly as with a harmless value.
    const shape = configShape(output.files.config);
    const benignShape = configShape(benign.files.config);
    if (named) {
      if (!isSubShape(shape, baselineShape) && !sameShape(shape, benignShape)) {
        issues.push(`haproxy.cfg gained directives although the object was left out: ${JSON.stringify(shape)}`);
      }
    } else {
      if (!sameShape(shape, benignShape)) {
        issues.push(`haproxy.cfg is not shaped as with a harmless value:\n      got      ${JSON.stringify(shape)}\n      expected ${JSON.stringify(benignShape)}`);
      }
      for (const [file, content] of files) {
        if (file === 'haproxy.cfg') continue;
        const expected = linesOf(benignFiles.get(file) ?? '').length;
        if (linesOf(content).length !== expected) issues.push(`${file} has ${linesOf(content).length} lines, expected ${expected}`);
      }
      if ([...files.keys()].join() !== [...benignFiles.keys()].join()) {
        issues.push(`files ${[...files.keys()].join(', ')}, expected ${[...benignFiles.keys()].join(', ')}`);
      }
    }

    // (b) Nothing of the payload in any file, and no line that no valid world renders.
    const certificates = Object.keys(output.files.certificates).map((file) => `${config.dataplane.certificatesDir}/${file}`);
    issues.push(...formatIssues(config, files, certificates));
    issues.push(...leakIssues(files, baselineFiles));
    issues.push(...novelLines(files, [baselineFiles, benignFiles, filesOf(config, renders.removed())]));

    // (c) HAProxy itself agrees.
    const result = await check(output);
    if (!result.valid) issues.push(`haproxy -c refuses it:\n      ${result.output.split('\n').join('\n      ')}`);
    return issues;
  }
});
