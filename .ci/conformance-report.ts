/**
 * The Gateway API conformance report of this controller, in the upstream
 * ConformanceReport format (sigs.k8s.io/gateway-api conformance/apis/v1,
 * compiled as conformance/utils/suite/reports.go does), from the project's
 * own run of its translated scenarios: the end-to-end specs
 * spec/e2e/gateway-api-*.spec.ts with real HAProxy, each scenario counted
 * under the features spec/e2e/gateway-api-conformance.ts tags it with.
 *
 * Run: `npm run conformance:report` (runs the specs with mocha's JSON
 * reporter, then writes docs/conformance/report.yaml; exits 1 when a
 * scenario failed or did not run, after writing the report that says so).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump } from 'js-yaml';
import { CONFORMANCE_PROFILES, GATEWAY_API_VERSION, SUPPORTED_FEATURES, type ConformanceProfile } from '../lib/gateway/features.ts';
import { SCENARIOS, type Scenario } from '../spec/e2e/gateway-api-conformance.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the report is committed. */
export const REPORT_PATH = 'docs/conformance/report.yaml';

/** The specs whose tests the scenarios are. */
const SPECS = /^gateway-api-.*\.spec\.ts$/;

export type Outcome = 'passed' | 'failed' | 'skipped';

type Result = 'success' | 'partial' | 'failure';

interface Status {
  result: Result;
  statistics: { Passed: number; Skipped: number; Failed: number };
  skippedTests?: string[];
  failedTests?: string[];
}

interface ProfileReport {
  name: string;
  summary: string;
  core: Status;
  extended?: Status & { supportedFeatures?: string[]; unsupportedFeatures?: string[] };
}

export interface ConformanceReport {
  apiVersion: 'gateway.networking.k8s.io/v1';
  kind: 'ConformanceReport';
  date: string;
  implementation: { organization: string; project: string; url: string; version: string; contact: string[] };
  gatewayAPIVersion: string;
  gatewayAPIChannel: 'standard';
  mode: 'default';
  profiles: ProfileReport[];
}

/** How a scenario is named in failedTests and skippedTests: its spec file and title, as the upstream names a test by its ShortName. */
export function scenarioName(scenario: Scenario): string {
  return `${scenario.spec.replace(/\.spec\.ts$/, '')}: ${scenario.title}`;
}

/** The profiles a run covers: those whose core features are all claimed (never GATEWAY-UDP: HAProxy has no UDP load balancing). */
export function claimedProfiles(): ConformanceProfile[] {
  return CONFORMANCE_PROFILES.filter((profile) => profile.core.every((feature) => SUPPORTED_FEATURES.includes(feature)));
}

/** getConformanceProfilesForTest: a scenario belongs to every profile that has each of its features. */
export function profilesOf(scenario: Scenario, profiles: readonly ConformanceProfile[]): ConformanceProfile[] {
  return profiles.filter((profile) => scenario.features.every((feature) => profile.core.includes(feature) || profile.extended.includes(feature)));
}

function emptyStatus(): Status {
  return { result: 'success', statistics: { Passed: 0, Skipped: 0, Failed: 0 } };
}

function count(status: Status, outcome: Outcome, name: string): void {
  if (outcome === 'passed') status.statistics.Passed++;
  else if (outcome === 'failed') {
    status.statistics.Failed++;
    (status.failedTests ??= []).push(name);
  } else {
    status.statistics.Skipped++;
    (status.skippedTests ??= []).push(name);
  }
}

function settle(status: Status): string {
  if (status.statistics.Failed > 0) {
    status.result = 'failure';
    return `failed with ${status.statistics.Failed} test failures`;
  }
  if (status.statistics.Skipped > 0) {
    status.result = 'partial';
    return `partially succeeded with ${status.statistics.Skipped} test skips`;
  }
  status.result = 'success';
  return 'succeeded';
}

/** The report of one run: `outcomeOf` says how each scenario went. */
export function compileReport(outcomeOf: (scenario: Scenario) => Outcome, date: string, version: string): ConformanceReport {
  const profiles = claimedProfiles();
  const reports = new Map<string, ProfileReport>();
  for (const scenario of SCENARIOS) {
    for (const profile of profilesOf(scenario, profiles)) {
      const report = reports.get(profile.name) ?? { name: profile.name, summary: '', core: emptyStatus() };
      reports.set(profile.name, report);
      const extended = scenario.features.some((feature) => !profile.core.includes(feature));
      count(extended ? (report.extended ??= emptyStatus()) : report.core, outcomeOf(scenario), scenarioName(scenario));
    }
  }
  for (const profile of profiles) {
    const report = reports.get(profile.name);
    if (report === undefined) continue;
    let summary = `Core tests ${settle(report.core)}`;
    if (report.extended !== undefined) {
      summary += `. Extended tests ${settle(report.extended)}`;
      const supported = profile.extended.filter((feature) => SUPPORTED_FEATURES.includes(feature)).sort();
      const unsupported = profile.extended.filter((feature) => !SUPPORTED_FEATURES.includes(feature)).sort();
      if (supported.length > 0) report.extended.supportedFeatures = supported;
      if (unsupported.length > 0) report.extended.unsupportedFeatures = unsupported;
    }
    report.summary = `${summary}.`;
  }
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ConformanceReport',
    date,
    // The url and contact are the project's until it has a public home to name: set them before submitting the report upstream.
    implementation: {
      organization: 'haproxy-template-ic',
      project: 'haproxy-template-ic',
      url: 'https://haproxy-template-ic.invalid',
      version,
      contact: ['the maintainers (CONTRIBUTING.md)'],
    },
    gatewayAPIVersion: GATEWAY_API_VERSION,
    gatewayAPIChannel: 'standard',
    mode: 'default',
    profiles: [...reports.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
}

/** The report as YAML, keys sorted as the upstream writes them. */
export function reportText(report: ConformanceReport): string {
  return dump(report, { sortKeys: true, lineWidth: -1, noRefs: true });
}

/** RFC 3339 to the second, as Go's time.RFC3339. */
function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface MochaTest {
  readonly title: string;
  readonly fullTitle: string;
  readonly file: string;
  readonly err: { readonly message?: string; readonly stack?: string };
}

interface MochaJson {
  readonly passes: readonly MochaTest[];
  readonly failures: readonly MochaTest[];
  readonly pending: readonly MochaTest[];
}

async function run(): Promise<number> {
  const specs = (await readdir(join(root, 'spec/e2e'))).filter((file) => SPECS.test(file)).map((file) => join('spec/e2e', file));
  const scratch = await mkdtemp(join(tmpdir(), 'conformance-'));
  try {
    const output = join(scratch, 'results.json');
    const mocha = join(root, 'node_modules/mocha/bin/mocha.js');
    const ran = spawnSync(process.execPath, [mocha, '--reporter', 'json', '--reporter-option', `output=${output}`, ...specs], { cwd: root, stdio: 'inherit' });
    const results = JSON.parse(await readFile(output, 'utf8')) as MochaJson;
    // The JSON goes to a scratch file: say why each failed test failed, as the spec reporter would.
    for (const test of results.failures) process.stderr.write(`failed: ${test.fullTitle}\n${test.err.stack ?? test.err.message ?? ''}\n\n`);
    const key = (spec: string, title: string) => `${spec}\u0000${title}`;
    const outcomes = new Map<string, Outcome>();
    for (const [tests, outcome] of [
      [results.passes, 'passed'],
      [results.failures, 'failed'],
      [results.pending, 'skipped'],
    ] as const) {
      for (const test of tests) outcomes.set(key(basename(test.file), test.title), outcome);
    }
    const missing: string[] = [];
    const report = compileReport(
      (scenario) => {
        const outcome = outcomes.get(key(scenario.spec, scenario.title));
        if (outcome === undefined) missing.push(scenarioName(scenario));
        // A scenario that did not run (its spec's hooks failed, or its title changed) is a skip, as upstream counts a test it could not run.
        return outcome ?? 'skipped';
      },
      now(),
      (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version,
    );
    await writeFile(join(root, REPORT_PATH), reportText(report));
    const notRun = [...new Set(missing)];
    for (const name of notRun) process.stderr.write(`did not run: ${name}\n`);
    for (const profile of report.profiles) process.stdout.write(`${profile.name}: ${profile.summary}\n`);
    process.stdout.write(`wrote ${REPORT_PATH}\n`);
    return ran.status === 0 && notRun.length === 0 ? 0 : 1;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await run();
