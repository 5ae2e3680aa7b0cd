import { expect } from 'chai';
import { conditionTime, desired, withTransitions } from '../../../lib/gateway/conditions.ts';

describe('Gateway API conditions', () => {
  const stored = [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'old', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }];

  it('keeps lastTransitionTime while the status holds, updating reason, message and generation in place', () => {
    const [accepted] = withTransitions([desired('Accepted', true, 'Accepted', 'new')], stored, 2, '2026-02-02T00:00:00Z');
    expect(accepted).to.deep.equal({ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'new', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' });
  });

  it('moves lastTransitionTime when the status changes, and sets it for a new condition', () => {
    const [accepted, resolved] = withTransitions(
      [desired('Accepted', false, 'NotAllowedByListeners', 'no'), desired('ResolvedRefs', true, 'ResolvedRefs', 'ok')],
      stored,
      2,
      '2026-02-02T00:00:00Z',
    );
    expect(accepted).to.include({ status: 'False', lastTransitionTime: '2026-02-02T00:00:00Z' });
    expect(resolved).to.include({ status: 'True', lastTransitionTime: '2026-02-02T00:00:00Z' });
  });

  it('writes times at whole seconds, as the API server stores metav1.Time', () => {
    expect(conditionTime(Date.parse('2026-11-24T12:00:00.987Z'))).to.equal('2026-11-24T12:00:00Z');
  });

  it('cuts a message to the length the CRDs allow', () => {
    expect(desired('Accepted', false, 'UnsupportedValue', 'x'.repeat(40_000)).message).to.have.length(32_768);
  });
});
