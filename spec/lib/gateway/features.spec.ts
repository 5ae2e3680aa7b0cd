import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { CONFORMANCE_PROFILES, GATEWAY_API_VERSION, SUPPORTED_FEATURES } from '../../../lib/gateway/features.ts';
import { SCENARIOS } from '../../e2e/gateway-api-conformance.ts';
import { claimedProfiles, compileReport, profilesOf, REPORT_PATH } from '../../../.ci/conformance-report.ts';

/**
 * The features the GatewayClass status claims, held to the translated
 * scenarios that prove them, and the committed conformance report held to
 * both. No HAProxy: the report's run is `npm run conformance:report`.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The titles of a spec file's tests, read from its text: `it('...')` with any of the three quotes, escapes undone. */
async function titlesOf(spec: string): Promise<string[]> {
  const text = await readFile(join(root, 'spec/e2e', spec), 'utf8');
  return [...text.matchAll(/\bit\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g)].map((match) => match[2]!.replace(/\\(.)/g, '$1'));
}

const KNOWN = new Set(CONFORMANCE_PROFILES.flatMap((profile) => [...profile.core, ...profile.extended]));

describe('Gateway API supported features and conformance report', () => {
  it('claims only feature names of Gateway API v1.6, sorted by name, and never UDPRoute', () => {
    expect(SUPPORTED_FEATURES.filter((feature) => !KNOWN.has(feature))).to.deep.equal([]);
    expect(SUPPORTED_FEATURES).to.deep.equal([...new Set(SUPPORTED_FEATURES)].sort());
    expect(SUPPORTED_FEATURES).not.to.include('UDPRoute');
  });

  it('claims each feature only where a translated scenario is tagged with it', () => {
    const proven = new Set(SCENARIOS.flatMap((scenario) => scenario.features));
    expect(SUPPORTED_FEATURES.filter((feature) => !proven.has(feature))).to.deep.equal([]);
  });

  it('tags scenarios with claimed features alone, each scenario in some claimed profile, and none twice', () => {
    const profiles = claimedProfiles();
    expect(profiles.map((profile) => profile.name)).to.deep.equal(['GATEWAY-HTTP', 'GATEWAY-TLS', 'GATEWAY-TCP', 'GATEWAY-GRPC']);
    for (const scenario of SCENARIOS) {
      const label = `${scenario.spec}: ${scenario.title}`;
      expect(
        scenario.features.filter((feature) => !SUPPORTED_FEATURES.includes(feature)),
        label,
      ).to.deep.equal([]);
      expect(profilesOf(scenario, profiles), label).not.to.deep.equal([]);
    }
    const keys = SCENARIOS.map((scenario) => `${scenario.spec}: ${scenario.title}`);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).to.deep.equal([]);
  });

  it('names every scenario by a test its spec file holds', async () => {
    const missing: string[] = [];
    for (const scenario of SCENARIOS) if (!(await titlesOf(scenario.spec)).includes(scenario.title)) missing.push(`${scenario.spec}: ${scenario.title}`);
    expect(missing).to.deep.equal([]);
  });

  it('commits a well-formed report of every scenario passing, as the feature list and the scenarios say (else run npm run conformance:report)', async () => {
    const committed = load(await readFile(join(root, REPORT_PATH), 'utf8')) as Record<string, unknown>;
    expect(committed).to.include({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'ConformanceReport', gatewayAPIVersion: GATEWAY_API_VERSION, mode: 'default' });
    expect(String(committed['date'])).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const implementation = committed['implementation'] as Record<string, unknown>;
    for (const field of ['organization', 'project', 'url', 'version']) expect(implementation[field], field).to.be.a('string').and.not.equal('');
    expect(implementation['contact']).to.be.an('array').that.is.not.empty;
    // All passed, compiled now from the scenarios and the feature list: the committed report must say the same, date aside.
    const expected = compileReport(() => 'passed', String(committed['date']), String(implementation['version']));
    expect(JSON.parse(JSON.stringify(committed))).to.deep.equal(JSON.parse(JSON.stringify(expected)));
    const http = expected.profiles.find((profile) => profile.name === 'GATEWAY-HTTP')!;
    expect(http.core.result).to.equal('success');
    expect(http.extended!.supportedFeatures).to.include.members(['HTTPRouteCORS', 'HTTPRouteRequestMirror', 'GatewayFrontendClientCertificateValidation']);
    const profile = CONFORMANCE_PROFILES.find((candidate) => candidate.name === 'GATEWAY-HTTP')!;
    expect([...http.extended!.supportedFeatures!, ...(http.extended!.unsupportedFeatures ?? [])].sort()).to.deep.equal([...profile.extended].sort());
  });
});
