import { expect } from 'chai';
import { deploymentOf, NOTHING_DEPLOYED, trackDeployment } from '../../../lib/gateway/deployment.ts';
import type { Outcome } from '../../../lib/pipeline/outcome.ts';

const rendered = (hash: string) => ({ type: 'rendered', revision: 1, hash, durationMs: 1, changes: { refs: [], dropped: 0 }, files: {}, excluded: [], warnings: [] }) as unknown as Outcome;
const deploying = (hash: string, endpoints: string[]): Outcome => ({ type: 'deploying', revision: 1, hash, reason: 'change', endpoints });
const deployed = (hash: string, endpoint: string) => ({ type: 'deployed', endpoint, revision: 1, hash, reason: 'change', attempts: 1, durationMs: 1, latencyMs: 1 }) as unknown as Outcome;
const failedOn = (hash: string, final: boolean) => ({ type: 'deployFailed', endpoint: 'a', revision: 1, hash, reason: 'change', error: 'x', attempt: 1, final }) as unknown as Outcome;
const refused = (hash: string): Outcome => ({ type: 'validationFailed', revision: 1, hash, error: 'x', durationMs: 1 });

function after(...outcomes: Outcome[]) {
  return deploymentOf(outcomes.reduce(trackDeployment, NOTHING_DEPLOYED));
}

describe('deployment of the configuration in force (what Programmed says)', () => {
  it('is pending until every instance handed the configuration has taken it', () => {
    expect(after()).to.equal('pending');
    expect(after(rendered('h1'), deploying('h1', ['a', 'b']), deployed('h1', 'a'))).to.equal('pending');
    expect(after(rendered('h1'), deploying('h1', ['a', 'b']), deployed('h1', 'a'), deployed('h1', 'b'))).to.equal('deployed');
  });

  it('goes pending again for a new configuration, and stays deployed for an unchanged render', () => {
    const live = [rendered('h1'), deploying('h1', ['a']), deployed('h1', 'a')];
    expect(after(...live, rendered('h2'))).to.equal('pending');
    expect(after(...live, rendered('h1'))).to.equal('deployed');
  });

  it('is failed when validation refuses the configuration or an instance gives up on it, not on a retry', () => {
    expect(after(rendered('h1'), refused('h1'))).to.equal('failed');
    expect(after(rendered('h1'), deploying('h1', ['a']), failedOn('h1', false))).to.equal('pending');
    expect(after(rendered('h1'), deploying('h1', ['a']), failedOn('h1', true))).to.equal('failed');
  });
});
