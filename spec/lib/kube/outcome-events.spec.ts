import { expect } from 'chai';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import { outcomeEvents, problemSubject } from '../../../lib/kube/outcome-events.ts';
import type { Problem } from '../../../lib/pipeline/model.ts';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const resources = loaded.config.watchedResources;
const configMap = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'haproxy', name: 'haproxy-config' };
const context = { configSources: [configMap], resources };
const changes = { count: 1, firstAt: 0, refs: [] };
const rendered = (excluded: readonly Problem[], warnings: readonly Problem[]): Outcome => ({
  type: 'rendered',
  revision: 3,
  hash: 'h',
  durationMs: 1,
  changes,
  files: { config: '', maps: {}, certificates: {}, files: {} },
  excluded,
  warnings,
});

describe('outcomeEvents', () => {
  it('tells the ConfigMap that its configuration was accepted or rejected, with the errors', () => {
    expect(outcomeEvents({ type: 'configApplied', generation: 2 }, context)).to.deep.equal([
      { regarding: configMap, type: 'Normal', reason: 'ConfigAccepted', action: 'LoadConfiguration', note: 'configuration accepted (generation 2)' },
    ]);
    const [rejected] = outcomeEvents({ type: 'configRejected', errors: ['debounce: bad', 'templates: worse'] }, context);
    expect(rejected).to.deep.include({ regarding: configMap, type: 'Warning', reason: 'ConfigRejected' });
    expect(rejected!.note).to.contain('debounce: bad; templates: worse');
  });

  it('tells every source of a configuration (a Secret synced by Flux too) that its render failed validation', () => {
    const flux = { apiVersion: 'v1', kind: 'Secret', namespace: 'haproxy', name: 'flux-haproxy' };
    const events = outcomeEvents(
      { type: 'validationFailed', revision: 2, hash: 'h', error: "[ALERT] unknown keyword 'bogus'", durationMs: 5 },
      { configSources: [configMap, flux], resources },
    );
    expect(events.map((e) => [e.regarding.name, e.type, e.reason])).to.deep.equal([
      ['haproxy-config', 'Warning', 'ConfigInvalid'],
      ['flux-haproxy', 'Warning', 'ConfigInvalid'],
    ]);
    expect(events[1]!.note).to.contain("unknown keyword 'bogus'");
  });

  it('tells an excluded object which field kept it out', () => {
    const outcome = rendered([{ object: 'Ingress shop/web', field: 'spec.rules[0].host', message: 'contains a newline' }], []);
    expect(outcomeEvents(outcome, context)).to.deep.equal([
      {
        regarding: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'shop', name: 'web' },
        type: 'Warning',
        reason: 'ObjectExcluded',
        action: 'Render',
        note: 'left out of the HAProxy configuration: spec.rules[0].host: contains a newline',
      },
    ]);
  });

  it('tells an object served other than it asked why: an Ingress whose backend settings an older one set', () => {
    const outcome = rendered(
      [],
      [
        {
          object: 'Ingress shop/newer',
          field: 'metadata.annotations',
          message: 'backend shop_web_80 is served with the settings of older Ingress shop/web, which differ from these in balance',
        },
      ],
    );
    expect(outcomeEvents(outcome, context)).to.deep.equal([
      {
        regarding: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'shop', name: 'newer' },
        type: 'Warning',
        reason: 'ObjectWarning',
        action: 'Render',
        note: 'served with a warning: metadata.annotations: backend shop_web_80 is served with the settings of older Ingress shop/web, which differ from these in balance',
      },
    ]);
  });

  it('tells a quarantined object that HAProxy refused it, and on which step', () => {
    const problem = {
      object: 'Ingress shop/web',
      field: 'metadata.annotations.timeout',
      message: "HAProxy refused the configuration with it, left out until it changes: haproxy.cfg:12: unexpected character 'q'",
    };
    const base = {
      type: 'quarantined',
      revision: 4,
      hash: 'h',
      objects: [problem],
      files: { config: '', maps: {}, certificates: {}, files: {} },
      excluded: [problem],
      warnings: [],
      total: 1,
      validations: 2,
    } as const;
    const events = [...outcomeEvents({ ...base, by: 'validation' }, context), ...outcomeEvents({ ...base, by: 'reload' }, context)];
    expect(events.map((event) => [event.regarding.kind, event.regarding.namespace, event.regarding.name, event.reason, event.action])).to.deep.equal([
      ['Ingress', 'shop', 'web', 'ObjectExcluded', 'Validate'],
      ['Ingress', 'shop', 'web', 'ObjectExcluded', 'Deploy'],
    ]);
    expect(events[0]!.note).to.equal(`left out of the HAProxy configuration: metadata.annotations.timeout: ${problem.message}`);
  });

  it('tells a HAProxy pod of every failed deployment attempt, the retries in one note, and says nothing about external endpoints', () => {
    const failed = (endpoint: string, attempt: number, final: boolean, error = 'reload failed'): Outcome => ({
      type: 'deployFailed',
      endpoint,
      revision: 4,
      hash: 'h',
      reason: 'change',
      error,
      attempt,
      final,
    });
    const pod = { apiVersion: 'v1', kind: 'Pod', namespace: 'haproxy', name: 'haproxy-1' };
    const notes = [failed('haproxy/haproxy-1', 1, false), failed('haproxy/haproxy-1', 2, false), failed('haproxy/haproxy-1', 3, true), failed('haproxy/haproxy-1', 1, true)].map((outcome) =>
      outcomeEvents(outcome, context),
    );
    expect(notes[0]).to.deep.equal([{ regarding: pod, type: 'Warning', reason: 'DeployFailed', action: 'Deploy', note: 'deploying revision 4 failed, retrying: reload failed' }]);
    // The same failure on the next attempt is the same event again: the recorder counts it in that event's series.
    expect(notes[1]).to.deep.equal(notes[0]);
    expect(notes.slice(2).map((events) => events.map((e) => e.note))).to.deep.equal([
      ['deploying revision 4 failed, gave up after 3 attempts: reload failed'],
      ['deploying revision 4 failed, gave up after 1 attempt: reload failed'],
    ]);
    expect(outcomeEvents(failed('http://10.0.0.1:5555', 1, false), context)).to.deep.equal([]);
    expect(outcomeEvents(failed('http://10.0.0.1:5555', 3, true), context)).to.deep.equal([]);
  });
});

describe('problemSubject', () => {
  it('resolves kinds and watched resource names, and refuses what cannot be an object name', () => {
    expect(problemSubject('Secret shop/tls', resources)).to.deep.equal({ apiVersion: 'v1', kind: 'Secret', namespace: 'shop', name: 'tls' });
    expect(problemSubject('services shop/web', resources)).to.deep.equal({ apiVersion: 'v1', kind: 'Service', namespace: 'shop', name: 'web' });
    expect(problemSubject('Ingress shop/"we b"', resources)).to.equal(undefined);
    expect(problemSubject('Gadget shop/x', resources)).to.equal(undefined);
  });
});
