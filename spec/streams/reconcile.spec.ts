import { expect } from 'chai';
import { BehaviorSubject, concat, mergeMap, NEVER, Observable, of, Subject, throwError, timer } from 'rxjs';
import type { Planner } from '../../lib/deploy/shared-planner.ts';
import type { Endpoint, RenderedFiles } from '../../lib/pipeline/model.ts';
import type { TestScheduler } from 'rxjs/testing';
import { endpoint, FakeWorld, healthy, type EndpointBehaviour } from '../support/fake-world.ts';
import { testScheduler } from '../support/marbles.ts';

/**
 * Acceptance cases on the composed pipeline (controller over reconcile) with
 * the shipped defaults (leading edge, debounce 500 ms, max wait 5 s, minimum
 * deployment interval 2 s, deploy timeout 30 s, drift 60 s) on virtual time. Effects take
 * fixed times: render 10 ms, validation 50 ms, deployment 20 ms.
 */

interface Scenario {
  readonly endpoints: readonly string[];
  readonly until: number;
  readonly script: (world: FakeWorld, at: (time: number, action: () => void) => void) => void;
  readonly candidates?: (at: (time: number, action: () => void) => void) => Observable<string>;
  /** The controller configuration when `candidates` gives none: "default", or "trailing" for the seed's trailing debounce. */
  readonly config?: string;
  /** The fleet's members apart from the endpoints (a follower's). */
  readonly members?: Subject<readonly Endpoint[]>;
  /** The fleet's planner. */
  readonly plan?: Planner;
}

/** Runs the controller in a fresh world until `until`, then stops it; a timer left running fails the run. */
function play(scenario: Scenario): { world: FakeWorld; scheduler: TestScheduler } {
  const scheduler = testScheduler();
  const world = new FakeWorld(scheduler, scenario.endpoints);
  if (scenario.members) world.members = scenario.members;
  if (scenario.plan) world.plan = scenario.plan;
  scheduler.run(() => {
    scheduler.maxFrames = scenario.until + 1;
    const at = (time: number, action: () => void) => void scheduler.schedule(action, time);
    const candidates = scenario.candidates?.(at) ?? concat(of(scenario.config ?? 'default'), NEVER);
    const subscription = world.run(candidates).subscribe();
    scenario.script(world, at);
    at(scenario.until, () => subscription.unsubscribe());
  });
  return { world, scheduler };
}

const after = <T extends { at: number }>(entries: readonly T[], time: number) => entries.filter((e) => e.at >= time);
const deploysTo = (world: FakeWorld, id: string) => world.of('deployed').filter((e) => e.outcome.endpoint === id);

/** 50 changes 8 ms apart from 10 s, over three Ingresses: ports 9000 to 9049. */
const burstOf50: Scenario['script'] = (w, at) => {
  for (let i = 0; i < 50; i++) at(10_000 + i * 8, () => w.modify(`ing-${i % 3}`, 9000 + i));
};

describe('the composed pipeline', () => {
  it('renders the first change of a burst at once and folds the other 49 within 400 ms into one more render and deploy per endpoint', () => {
    const { world } = play({
      endpoints: ['a', 'b'],
      until: 20_000,
      script: burstOf50,
    });
    // The initial sync rendered once; the burst (10.000 s to 10.392 s) renders its first change on arrival
    // and everything after it exactly once more, 500 ms after the last.
    expect(world.renders).to.have.length(3);
    const [leadingRender, burstRender] = after(world.renders, 10_000);
    expect(leadingRender?.at).to.equal(10_000);
    expect(leadingRender?.config).to.include(':9000').and.not.include(':9001');
    expect(burstRender?.at).to.equal(10_392 + 500);
    expect(burstRender?.config).to.include(':9049').and.include(':9048').and.include(':9047');
    // Each endpoint gets exactly one deployment of each.
    const burstDeploys = after(world.deployCalls, 10_000);
    expect(burstDeploys.map((d) => [d.endpoint, d.revision])).to.have.deep.members([
      ['a', leadingRender?.revision],
      ['b', leadingRender?.revision],
      ['a', burstRender?.revision],
      ['b', burstRender?.revision],
    ]);
  });

  it('with the trailing debounce, folds a burst of 50 changes within 400 ms into one render and one deploy per endpoint', () => {
    const { world } = play({
      endpoints: ['a', 'b'],
      until: 20_000,
      config: 'trailing',
      script: burstOf50,
    });
    // The initial sync rendered once; the burst (10.000 s to 10.392 s) renders exactly once more.
    expect(world.renders).to.have.length(2);
    const [burstRender] = after(world.renders, 10_000);
    expect(burstRender?.at).to.equal(10_392 + 500);
    expect(burstRender?.config).to.include(':9049').and.include(':9048').and.include(':9047');
    // And each endpoint gets exactly one deployment of it.
    const burstDeploys = after(world.deployCalls, 10_000);
    expect(burstDeploys.map((d) => [d.endpoint, d.revision])).to.have.deep.members([
      ['a', burstRender?.revision],
      ['b', burstRender?.revision],
    ]);
  });

  it('keeps deploying at least every 5 s under changes every 100 ms for 20 s', () => {
    const { world } = play({
      endpoints: ['a'],
      until: 32_000,
      script: (w, at) => {
        for (let i = 0; i < 200; i++) at(10_000 + i * 100, () => w.modify('ing-0', 10_000 + i));
      },
    });
    // The debounce never sees 500 ms of quiet during the churn; the maximum wait still triggers.
    const churnDeploys = after(deploysTo(world, 'a'), 10_000).map((e) => e.at);
    const pipelineMs = 10 + 50 + 20;
    expect(churnDeploys.length).to.be.at.least(4);
    expect(churnDeploys[0]).to.be.at.most(10_000 + 5_000 + pipelineMs);
    for (let i = 1; i < churnDeploys.length; i++) {
      expect(churnDeploys[i]! - churnDeploys[i - 1]!, `gap before deploy ${i}`).to.be.at.most(5_000);
    }
    // The last change of the churn is deployed once it stops.
    expect(world.deployCalls.at(-1)?.config).to.include(':10199');
  });

  it('asks runtime-first’s question of the fleet’s planner, about the files object the deployment is then given (so the deployment reuses that plan)', () => {
    const planned: { deployed: RenderedFiles; desired: RenderedFiles }[] = [];
    const { world } = play({
      endpoints: ['a'],
      until: 20_000,
      config: 'runtime-first',
      // Every change is one server more: runtime-only.
      plan: (deployed, desired) => {
        planned.push({ deployed, desired });
        return { kind: 'runtime', operations: [{ type: 'deleteServer', backend: 'web', server: 's1' }] };
      },
      script: (w, at) => {
        at(10_000, () => w.modify('ing-0', 9001));
        at(15_000, () => w.modify('ing-0', 9002));
      },
    });
    expect(world.of('runtimeFirst')).to.have.length(2);
    // Each is deployed before its verdict, then again, confirmed, to write its files: the runtime plan is the first's.
    const deployed = after(world.deployCalls, 10_000).filter((call) => call.reason === 'change');
    expect(after(world.deployCalls, 10_000).map((call) => call.reason)).to.deep.equal(['change', 'confirmed', 'change', 'confirmed']);
    expect(planned.map(({ desired }) => desired)).to.deep.equal(deployed.map((call) => call.files));
    for (const [index, { desired }] of planned.entries()) expect(desired).to.equal(deployed[index]!.files);
    // Each question is asked against the configuration deployed before it.
    expect(planned[1]!.deployed).to.equal(deployed[0]!.files);
  });

  it('never validates a config superseded while validation runs, and deploys the newest', () => {
    const { world } = play({
      endpoints: ['a', 'b'],
      until: 25_000,
      script: (w, at) => {
        at(9_999, () => (w.validateMs = 3_000));
        at(10_000, () => w.modify('ing-0', 9001)); // validated from 10.510 s to 13.510 s
        at(10_600, () => w.modify('ing-0', 9002)); // rendered at 11.110 s, while 9001 is validated
        at(11_200, () => w.modify('ing-0', 9003)); // rendered at 11.710 s, supersedes 9002
      },
    });
    const validated = after(world.validations, 10_000).map((v) => v.config);
    expect(validated).to.have.length(2);
    expect(validated[0]).to.include(':9001');
    expect(validated[1]).to.include(':9003');
    expect(world.deployCalls.some((d) => d.config.includes(':9002'))).to.equal(false);
    for (const id of ['a', 'b']) {
      expect(deploysTo(world, id).at(-1)?.outcome.hash).to.equal(world.of('validated').at(-1)?.outcome.hash);
    }
    expect(world.deployCalls.filter((d) => d.config.includes(':9003')).map((d) => d.endpoint)).to.have.members(['a', 'b']);
  });

  describe('endpoint isolation', () => {
    const changes = (w: FakeWorld, at: (time: number, action: () => void) => void) => {
      at(10_000, () => w.modify('ing-0', 9001));
      at(11_000, () => w.modify('ing-0', 9002));
    };
    const control = play({ endpoints: ['a', 'b', 'c'], until: 50_000, script: changes }).world;
    const deployedAt = (world: FakeWorld, id: string) => deploysTo(world, id).map((e) => [e.at, e.outcome.revision]);

    it('lets endpoint B fail three times and recover without delaying A, ending with the latest config', () => {
      const failing: EndpointBehaviour = (call) => (call >= 2 && call <= 4 ? timer(20).pipe(mergeMap(() => throwError(() => new Error('connect ECONNREFUSED 10.0.0.2:5555')))) : healthy());
      const { world } = play({
        endpoints: ['a', 'b', 'c'],
        until: 50_000,
        script: (w, at) => {
          w.behave('b', failing);
          changes(w, at);
        },
      });
      expect(deployedAt(world, 'a')).to.deep.equal(deployedAt(control, 'a'));
      expect(deployedAt(world, 'c')).to.deep.equal(deployedAt(control, 'c'));
      const failures = world.of('deployFailed').map((e) => e.outcome);
      expect(failures.map((f) => [f.endpoint, f.final])).to.deep.equal([
        ['b', false],
        ['b', false],
        ['b', false],
      ]);
      expect(failures[0]?.error).to.include('ECONNREFUSED');
      // B's last deployment is the newest config, not the one it was failing on.
      const latest = world.of('validated').at(-1)?.outcome.hash;
      expect(deploysTo(world, 'b').at(-1)?.outcome.hash).to.equal(latest);
      expect(deploysTo(world, 'a').at(-1)?.outcome.hash).to.equal(latest);
    });

    it('abandons an endpoint that hangs past the deploy timeout and retries it, others unaffected', () => {
      const { world } = play({
        endpoints: ['a', 'b', 'c'],
        until: 50_000,
        script: (w, at) => {
          w.behave('c', (call) => (call === 2 ? NEVER : healthy()));
          at(10_000, () => w.modify('ing-0', 9001));
        },
      });
      const hangStart = world.deployCalls.find((d) => d.endpoint === 'c' && d.at >= 10_000)!.at;
      const failure = world.of('deployFailed')[0];
      expect(failure?.at).to.equal(hangStart + 30_000);
      expect(failure?.outcome).to.include({ endpoint: 'c', attempt: 1, final: false });
      expect(failure?.outcome.type === 'deployFailed' && failure.outcome.error).to.match(/timed out after 30000 ms/);
      // The hanging call was unsubscribed (abandoned), then a retry deployed the same config.
      expect(world.openDeploys).to.equal(0);
      const retried = deploysTo(world, 'c').at(-1);
      expect(retried?.outcome).to.include({ attempts: 2, revision: failure?.outcome.revision });
      expect(deployedAt(world, 'a').filter(([t]) => t! >= 10_000)).to.deep.equal(deployedAt(control, 'a').filter(([t]) => t! >= 10_000 && t! < 11_000));
    });
  });

  it('quarantines the one Ingress HAProxy refuses, deploys the rest after one more render and validation, and takes it back once it changes', () => {
    const { world } = play({
      endpoints: ['a'],
      until: 30_000,
      script: (w, at) => {
        w.rejectPort(7777);
        at(10_000, () => {
          w.modify('ing-0', 7777);
          w.modify('ing-1', 9001);
        });
        at(20_000, () => w.modify('ing-0', 8001));
      },
    });
    const quarantined = world.of('quarantined');
    expect(quarantined.map((e) => e.outcome.objects.map((p) => `${p.object} ${p.field}`))).to.deep.equal([['Ingress default/ing-0 spec.port']]);
    // Both changes, made together, rendered at once at 10 s (the leading edge), refused at 10.06 s, rendered
    // again and accepted at 10.12 s.
    expect(quarantined[0]).to.deep.include({ at: 10_120 });
    expect(quarantined[0]!.outcome.validations).to.equal(2);
    const changeDeploys = after(world.deployCalls, 10_000).filter((d) => d.at < 20_000);
    expect(changeDeploys.map((d) => d.config)).to.deep.equal(['backend ing-1 :9001\nbackend ing-2 :8000']);
    // Fixed, it is released and deployed with the next render: no further validation refused.
    expect(world.of('released').map((e) => e.outcome.objects.map((p) => p.object))).to.deep.equal([['Ingress default/ing-0']]);
    expect(after(world.deployCalls, 20_000).map((d) => d.config)).to.deep.equal(['backend ing-0 :8001\nbackend ing-1 :9001\nbackend ing-2 :8000']);
    expect(world.of('validationFailed')).to.deep.equal([]);
  });

  it('quarantines the Ingress on the line of a reload HAProxy refuses and deploys a render without it, without waiting for a change', () => {
    const { world } = play({
      endpoints: ['a'],
      until: 30_000,
      script: (w, at) => {
        // The endpoint's HAProxy refuses port 6666, which validation accepted.
        w.behave('a', (_call, request) => {
          const line = request.config.files.config.split('\n').findIndex((text) => text.endsWith(':6666'));
          if (line < 0) return healthy();
          return throwError(() => new Error(`HAProxy rejected the reload (x): [ALERT] (1) : config : parsing [/run/haproxy/haproxy.cfg:${line + 1}] : cannot bind port 6666`));
        });
        at(10_000, () => w.modify('ing-2', 6666));
      },
    });
    const quarantined = world.of('quarantined');
    expect(quarantined.map((e) => [e.outcome.by, e.outcome.objects.map((p) => `${p.object} ${p.field}`)])).to.deep.equal([['reload', ['Ingress default/ing-2 spec.port']]]);
    const deployed = after(world.of('deployed'), 10_000);
    // The deployment that succeeded is the last call before it: the configuration without ing-2.
    expect(deployed.map((e) => world.deployCalls.filter((call) => call.at <= e.at).at(-1)?.config)).to.deep.equal(['backend ing-0 :8000\nbackend ing-1 :8000']);
    // The render without it came at once, for the same revision, and carried the change it delivers.
    expect(after(world.renders, 10_000).map((r) => r.revision)).to.have.length(2);
    expect(deployed[0]!.outcome.latencyMs).to.be.at.least(500);
  });

  it('gives an endpoint added mid-run the current config at once, and ends a removed one cleanly', () => {
    const candidates = new Subject<string>();
    const { world, scheduler } = play({
      endpoints: ['a'],
      until: 100_000,
      script: (w, at) => {
        at(20_000, () => w.endpoints.next([endpoint('a'), endpoint('d')]));
        at(25_000, () => w.behave('d', () => NEVER));
        at(25_000, () => w.modify('ing-1', 9100));
        at(26_000, () => w.endpoints.next([endpoint('a')]));
        at(40_000, () => {
          w.endpoints.complete();
          w.endSources();
          candidates.complete();
        });
      },
      candidates: () => concat(of('default'), candidates),
    });
    // d is deployed at 20 s, with no resource change, the config a already runs.
    const discovered = world.deployCalls.filter((d) => d.endpoint === 'd');
    expect(discovered[0]).to.include({ at: 20_000, reason: 'discovered' });
    expect(discovered[0]?.config).to.equal(world.deployCalls.find((d) => d.endpoint === 'a')?.config);
    expect(after(world.renders, 1_000).filter((r) => r.at < 25_000)).to.have.length(0);
    // d's deploy of the 25 s change hung; removing d at 26 s abandoned it, with no retry afterwards.
    expect(world.deployCalls.filter((d) => d.endpoint === 'd').map((d) => d.at)).to.have.length(2);
    expect(world.of('deployFailed')).to.have.length(0);
    // Once every source completed the controller completed, with nothing left subscribed or scheduled.
    expect(world.openDeploys).to.equal(0);
    expect(world.openSources).to.equal(0);
    expect(scheduler.actions).to.have.length(0);
  });

  it("renders again when the fleet's peers change (a pod joins, one comes back at a new address), and not for the same peers listed again", () => {
    const peered = (id: string, address: string) => ({ ...endpoint(id), peer: { name: id, address } });
    const { world } = play({
      endpoints: [],
      until: 60_000,
      script: (w, at) => {
        at(0, () => w.endpoints.next([peered('a', '10.0.0.1'), peered('b', '10.0.0.2')]));
        at(20_000, () => w.endpoints.next([peered('a', '10.0.0.1'), peered('b', '10.0.0.2'), peered('c', '10.0.0.3')]));
        at(30_000, () => w.endpoints.next([peered('a', '10.0.0.1'), peered('b', '10.0.0.9'), peered('c', '10.0.0.3')]));
        // The same members in another order: the same peers section.
        at(40_000, () => w.endpoints.next([peered('c', '10.0.0.3'), peered('b', '10.0.0.9'), peered('a', '10.0.0.1')]));
      },
    });
    // The members found after the first render are rendered at once; so is each change of members, with no resource change.
    expect(
      world.renders
        .filter((r) => r.at < 1_000)
        .map((r) => [
          r.at,
          r.config
            .split('\n')
            .filter((line) => line.startsWith('peer'))
            .join(','),
        ]),
    ).to.deep.equal([
      [0, ''],
      [0, 'peer a 10.0.0.1,peer b 10.0.0.2'],
    ]);
    expect(after(world.renders, 1_000).map((r) => r.at)).to.deep.equal([20_000, 30_000]);
    expect(after(world.renders, 1_000)[0]?.config).to.match(/peer a 10\.0\.0\.1\npeer b 10\.0\.0\.2\npeer c 10\.0\.0\.3$/);
    expect(after(world.renders, 1_000)[1]?.config).to.include('peer b 10.0.0.9');
    // a, which was there all along, runs the section that lists c and b's new address, deployed as a change.
    const toA = after(deploysTo(world, 'a'), 1_000);
    expect(toA.map((d) => d.outcome.reason)).to.deep.equal(['change', 'change']);
    expect(world.deployCalls.filter((d) => d.endpoint === 'a').at(-1)?.config).to.include('peer b 10.0.0.9\npeer c 10.0.0.3');
    // c is given the configuration of the moment it was found, then the one that lists it.
    expect(world.deployCalls.filter((d) => d.endpoint === 'c' && d.reason !== 'drift').map((d) => d.reason)).to.deep.equal(['discovered', 'change', 'change']);
  });

  it("renders the members' peers while deploying to none (a follower), and deploys that render once it deploys to them, without rendering again", () => {
    const members = [
      { ...endpoint('a'), peer: { name: 'a', address: '10.0.0.1' } },
      { ...endpoint('b'), peer: { name: 'b', address: '10.0.0.2' } },
    ];
    const { world } = play({
      endpoints: [],
      members: new BehaviorSubject<readonly Endpoint[]>(members),
      until: 30_000,
      script: (w, at) => at(20_000, () => w.endpoints.next(members)),
    });
    expect(
      world.renders.map((r) =>
        r.config
          .split('\n')
          .filter((line) => line.startsWith('peer'))
          .join(','),
      ),
    ).to.deep.equal(['peer a 10.0.0.1,peer b 10.0.0.2']);
    expect(world.deployCalls.map((d) => [d.at, d.endpoint, d.reason, d.config === world.renders[0]!.config])).to.deep.equal([
      [20_000, 'a', 'discovered', true],
      [20_000, 'b', 'discovered', true],
    ]);
  });

  it('renders the members again when their first list comes after the first render', () => {
    const members = new Subject<readonly Endpoint[]>();
    const { world } = play({
      endpoints: ['a'],
      members,
      until: 10_000,
      script: (_, at) => at(3_000, () => members.next([{ ...endpoint('a'), peer: { name: 'a', address: '10.0.0.1' } }])),
    });
    expect(
      world.renders.map((r) => [
        r.at,
        r.config
          .split('\n')
          .filter((line) => line.startsWith('peer'))
          .join(','),
      ]),
    ).to.deep.equal([
      [0, ''],
      [3_000, 'peer a 10.0.0.1'],
    ]);
  });

  it('keeps the running pipeline on an invalid controller config and replaces it on a valid one', () => {
    const { world } = play({
      endpoints: ['a'],
      until: 45_000,
      candidates: (at) =>
        new Observable<string>((subscriber) => {
          subscriber.next('default');
          at(10_000, () => subscriber.next('broken'));
          at(20_000, () => subscriber.next('fast-drift'));
        }),
      script: (w, at) => {
        at(15_000, () => w.modify('ing-0', 9001));
      },
    });
    const rejected = world.of('configRejected');
    expect(rejected.map((e) => [e.at, e.outcome.errors])).to.deep.equal([[10_000, ['config broken: debounce: "soon" is not a duration']]]);
    // The first pipeline survived the rejection: still one source subscription, and 15 s deployed.
    expect(world.deployCalls.some((d) => d.config.includes(':9001') && d.at < 20_000)).to.equal(true);
    expect(world.of('configApplied').map((e) => [e.at, e.outcome.generation])).to.deep.equal([
      [0, 1],
      [20_000, 2],
    ]);
    expect(world.sourceSubscriptions).to.equal(2);
    expect(world.openSources).to.equal(0);
    // The new pipeline runs with the new settings: drift checks every 10 s from 20 s on.
    const driftChecks = world.deployCalls.filter((d) => d.reason === 'drift').map((d) => d.at);
    expect(driftChecks).to.deep.equal([30_000, 40_000]);
  });
});
