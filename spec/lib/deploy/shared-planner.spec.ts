import { expect } from 'chai';
import { planDeployment } from '../../../lib/haproxy/plan.ts';
import type { Plan } from '../../../lib/haproxy/plan-types.ts';
import { sharedPlanner } from '../../../lib/deploy/shared-planner.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';

function files(servers: readonly string[], hostMap = 'a.example.com app\n'): RenderedFiles {
  return {
    config: ['defaults', '  mode http', 'backend app', '  balance roundrobin', ...servers.map((address, i) => `  server s${i} ${address}:8080`), ''].join('\n'),
    maps: { 'host.map': hostMap },
    certificates: {},
    files: {},
  };
}

/** A planner that counts how often it really plans. */
function counting(): { plan: (deployed: RenderedFiles, desired: RenderedFiles) => Plan; calls: () => number } {
  let calls = 0;
  return {
    plan: (deployed, desired) => {
      calls++;
      return planDeployment(deployed, desired);
    },
    calls: () => calls,
  };
}

describe('sharedPlanner', () => {
  it('plans once for endpoints that hold copies of the same files and get the same desired object', () => {
    const inner = counting();
    const plan = sharedPlanner(inner.plan);
    const desired = files(['127.0.0.1', '127.0.0.2']);
    // Each endpoint read its state on its own: equal content, distinct objects.
    const plans = Array.from({ length: 20 }, () => plan(files(['127.0.0.1']), desired));
    expect(inner.calls()).to.equal(1);
    expect(plans[0]).to.deep.equal(planDeployment(files(['127.0.0.1']), desired));
    expect(plans[0]!.kind).to.equal('runtime');
    expect(new Set(plans).size).to.equal(1);
  });

  it('plans again when the deployed content differs, in the configuration or in a file', () => {
    const inner = counting();
    const plan = sharedPlanner(inner.plan);
    const desired = files(['127.0.0.1', '127.0.0.2']);
    const behind = plan(files(['127.0.0.1']), desired);
    const elsewhere = plan(files(['127.0.0.3']), desired);
    const otherMap = plan(files(['127.0.0.1'], 'b.example.com app\n'), desired);
    expect(inner.calls()).to.equal(3);
    expect(elsewhere).to.not.deep.equal(behind);
    expect(otherMap).to.deep.equal(planDeployment(files(['127.0.0.1'], 'b.example.com app\n'), desired));
    // Each is kept: an endpoint in any of those states is planned without planning again.
    plan(files(['127.0.0.3']), desired);
    plan(files(['127.0.0.1']), desired);
    expect(inner.calls()).to.equal(3);
  });

  it('plans again for another desired object, even one of equal content', () => {
    const inner = counting();
    const plan = sharedPlanner(inner.plan);
    const deployed = files(['127.0.0.1']);
    plan(deployed, files(['127.0.0.1', '127.0.0.2']));
    plan(deployed, files(['127.0.0.1', '127.0.0.2']));
    expect(inner.calls()).to.equal(2);
  });

  it('keeps a bounded number of deployed states per desired configuration', () => {
    const inner = counting();
    const plan = sharedPlanner(inner.plan);
    const desired = files(['127.0.0.1']);
    for (let i = 2; i <= 10; i++) plan(files([`127.0.0.${i}`]), desired);
    expect(inner.calls()).to.equal(9);
    // The newest states are still known, the oldest were let go.
    plan(files(['127.0.0.10']), desired);
    expect(inner.calls()).to.equal(9);
    plan(files(['127.0.0.2']), desired);
    expect(inner.calls()).to.equal(10);
  });
  it("reads a configuration once across plans: the next change's plan starts from this one's desired configuration, parsed and named already", () => {
    const seen: { deployed: unknown; desired: unknown; named: unknown; namedDeployed?: unknown }[] = [];
    const plan = sharedPlanner((deployed, desired, reader) => {
      const deployedConfig = reader!.parse(deployed.config);
      const desiredConfig = reader!.parse(desired.config);
      seen.push({ deployed: deployedConfig, desired: desiredConfig, named: reader!.named(desiredConfig), namedDeployed: reader!.named(deployedConfig) });
      return planDeployment(deployed, desired, reader);
    });
    const [a, b, c] = [files(['127.0.0.1']), files(['127.0.0.1', '127.0.0.2']), files(['127.0.0.2'])];
    plan(a, b);
    plan(b, c);
    expect(seen[1]!.deployed).to.equal(seen[0]!.desired);
    expect(plan(c, a).kind).to.equal('runtime');
    expect(seen[2]!.deployed).to.equal(seen[1]!.desired);
    expect(seen[1]!.namedDeployed, 'its sections named once').to.equal(seen[0]!.named);
    const again = sharedPlanner(
      (deployed, desired, reader) => (seen.push({ deployed: reader!.parse(deployed.config), desired: undefined, named: undefined }), planDeployment(deployed, desired, reader)),
    );
    again(b, c);
    expect(seen[3]!.deployed, 'another planner reads afresh').to.not.equal(seen[0]!.desired);
  });
});
