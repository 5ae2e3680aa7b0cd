import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Assertion, ControllerConfig, ValidationTest } from '../config/types.ts';
import { checkConfig, haproxyBinary } from '../haproxy/check.ts';
import type { KubeObject, RenderedFiles } from '../pipeline/model.ts';
import { contentHash } from '../pipeline/content-hash.ts';
import type { RenderOutput } from '../pipeline/model.ts';
import { createRenderer } from '../render/renderer.ts';
import { routingViews } from '../routing-view/routing-view.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { buildStores } from '../store/build-stores.ts';

export interface AssertionResult {
  readonly test: string;
  readonly assertion: string;
  readonly passed: boolean;
  readonly detail: string;
}

export interface RunOptions {
  /** `haproxy -c` on a written configuration, behind the directive guard; injected so callers choose the binary. */
  readonly check?: (configFile: string) => Promise<{ valid: boolean; output: string }>;
}

function describeAssertion(assertion: Assertion): string {
  switch (assertion.type) {
    case 'haproxy_valid':
    case 'deterministic':
      return assertion.type;
    case 'contains':
    case 'not_contains':
      return `${assertion.type} ${assertion.target} /${assertion.pattern.source}/`;
    case 'equals':
      return `equals ${assertion.target}`;
    case 'match_count':
      return `match_count ${assertion.target} /${assertion.pattern.source}/ = ${assertion.count}`;
  }
}

/** A file of a render by its target name: `haproxy.cfg`, or `<dir>/<name>` under the configured directories. */
function targetContent(config: ControllerConfig, files: RenderedFiles, target: string): string | undefined {
  if (target === 'haproxy.cfg') return files.config;
  const slash = target.indexOf('/');
  const dir = target.slice(0, slash);
  const name = target.slice(slash + 1);
  const { mapsDir, certificatesDir, generalDir } = config.dataplane;
  const group = dir === mapsDir ? files.maps : dir === certificatesDir ? files.certificates : dir === generalDir ? files.files : {};
  return group[name];
}

function excerpt(text: string): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine;
}

/** The fixtures in the opposite order: output that depends on input order shows up. */
function reversed<T>(items: readonly T[]): T[] {
  return [...items].reverse();
}

/**
 * Runs a configuration's validationTests: each test's fixtures are put in
 * stores as the controller would store them, rendered into a private
 * temporary directory, and checked by its assertions.
 */
export async function runValidationTests(config: ControllerConfig, options: RunOptions = {}): Promise<AssertionResult[]> {
  // The guard first, with the configuration's own allowances: `haproxy -c` would run a lua-load.
  const check = options.check ?? ((file: string) => checkConfig(file, haproxyBinary(), { allowDirectives: config.allowDirectives }));
  const render = createRenderer(config, routingViews);
  const results: AssertionResult[] = [];
  for (const test of config.validationTests) results.push(...(await runTest(config, test, render, check)));
  return results;
}

async function runTest(config: ControllerConfig, test: ValidationTest, render: ReturnType<typeof createRenderer>, check: NonNullable<RunOptions['check']>): Promise<AssertionResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'haproxy-template-ic-test-'));
  const result = (assertion: Assertion, passed: boolean, detail: string): AssertionResult => ({
    test: test.name,
    assertion: describeAssertion(assertion),
    passed,
    detail,
  });
  try {
    const renderWith = (order: (objects: readonly KubeObject[]) => readonly KubeObject[]): RenderOutput => {
      const fixtures = new Map([...test.fixtures].map(([name, objects]) => [name, order(objects)]));
      return render({ stores: buildStores(config.watchedResources, fixtures, config.ignoreFields), baseDir: dir });
    };
    let output: RenderOutput;
    try {
      output = renderWith((objects) => objects);
    } catch (error) {
      const message = `render failed: ${error instanceof Error ? error.message : String(error)}`;
      return test.assertions.map((assertion) => result(assertion, false, message));
    }
    const configFile = await writeRenderedFiles(dir, output.files, config.dataplane);
    const results: AssertionResult[] = [];
    for (const assertion of test.assertions) {
      switch (assertion.type) {
        case 'haproxy_valid': {
          const verdict = await check(configFile);
          results.push(result(assertion, verdict.valid, verdict.valid ? 'haproxy -c accepted it' : verdict.output));
          break;
        }
        case 'deterministic': {
          const again = renderWith(reversed);
          const same = contentHash(again.files) === contentHash(output.files);
          results.push(result(assertion, same, same ? 'same output for reordered fixtures' : 'output depends on fixture order'));
          break;
        }
        default: {
          const content = targetContent(config, output.files, assertion.target);
          if (content === undefined) {
            results.push(result(assertion, false, `${assertion.target} was not rendered`));
            break;
          }
          results.push(checkContent(assertion, content, result));
        }
      }
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function checkContent(
  assertion: Exclude<Assertion, { type: 'haproxy_valid' | 'deterministic' }>,
  content: string,
  result: (assertion: Assertion, passed: boolean, detail: string) => AssertionResult,
): AssertionResult {
  switch (assertion.type) {
    case 'contains':
      return result(assertion, assertion.pattern.test(content), assertion.pattern.test(content) ? 'found' : 'not found');
    case 'not_contains': {
      const match = assertion.pattern.exec(content);
      return result(assertion, !match, match ? `found ${excerpt(match[0])}` : 'absent');
    }
    case 'equals':
      return result(assertion, content === assertion.expected, content === assertion.expected ? 'equal' : `got ${excerpt(content)}`);
    case 'match_count': {
      const global = new RegExp(assertion.pattern.source, assertion.pattern.flags.includes('g') ? assertion.pattern.flags : `${assertion.pattern.flags}g`);
      const count = [...content.matchAll(global)].length;
      return result(assertion, count === assertion.count, `${count} matches`);
    }
  }
}
