import { expect } from 'chai';
import { outcomeLines } from '../../../lib/cli/outcome-lines.ts';

const deployed = {
  type: 'deployed',
  endpoint: 'local',
  revision: 3,
  hash: 'h',
  reason: 'change',
  attempts: 1,
  durationMs: 12,
  latencyMs: 530,
} as const;

describe('outcome lines', () => {
  it('says how each deployment went: runtime or reload with its reason, and how long it took', () => {
    expect(outcomeLines({ ...deployed, result: { mode: 'runtime', operations: 2 } })).to.deep.equal([
      'deployed revision 3 to local: runtime, no reload (2 operations) in 12 ms, 530 ms after the change',
    ]);
    expect(outcomeLines({ ...deployed, result: { mode: 'reload', reloadReason: 'backend default_api_80 added', operations: 0 } })).to.deep.equal([
      'deployed revision 3 to local: reload (backend default_api_80 added) in 12 ms, 530 ms after the change',
    ]);
    expect(outcomeLines({ ...deployed, reason: 'drift', latencyMs: undefined, result: { mode: 'unchanged', operations: 0 } })).to.deep.equal([]);
  });

  it('names the object, file or setting at fault in every error', () => {
    expect(outcomeLines({ type: 'resourceError', error: 'app.yaml#2: has no kind' })).to.deep.equal(['error: app.yaml#2: has no kind']);
    expect(outcomeLines({ type: 'configRejected', errors: ['config.yaml: debounce: bad'] })).to.deep.equal([
      'configuration rejected, the running one keeps serving:',
      '    config.yaml: debounce: bad',
    ]);
    expect(
      outcomeLines({
        type: 'rendered',
        revision: 1,
        hash: 'h',
        durationMs: 1,
        changes: { count: 0, firstAt: 0, refs: [] },
        excluded: [{ object: 'Ingress default/evil', field: 'spec.rules[0].host', message: 'not a host name' }],
        warnings: [],
      }),
    ).to.deep.equal(['excluded Ingress default/evil: spec.rules[0].host: not a host name']);
    expect(outcomeLines({ type: 'validationFailed', revision: 2, hash: 'h', durationMs: 5, error: 'haproxy.cfg:3: x\n  rendered: "y"' })).to.deep.equal([
      'configuration invalid, the running one keeps serving:\n    haproxy.cfg:3: x\n      rendered: "y"',
    ]);
  });
});
