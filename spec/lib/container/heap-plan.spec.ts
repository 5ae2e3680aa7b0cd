import { expect } from 'chai';
import { heapPlan, heapRatio, nodeFlags } from '../../../lib/container/heap-plan.ts';
import { cgroupRoots, cgroupV1, cgroupV2 } from './cgroup-files.ts';

describe('heapRatio', () => {
  it('is 0.9 when HAPROXY_TEMPLATE_IC_HEAP_RATIO is unset or empty', () => {
    expect(heapRatio({})).to.equal(0.9);
    expect(heapRatio({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: ' ' })).to.equal(0.9);
  });

  it('reads fractions up to 1', () => {
    expect(heapRatio({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: '0.75' })).to.equal(0.75);
    expect(heapRatio({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: '.5' })).to.equal(0.5);
    expect(heapRatio({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: '1' })).to.equal(1);
  });

  for (const bad of ['0', '1.2', '-0.5', 'ninety', '90%', '1e-1', '0x1']) {
    it(`rejects ${JSON.stringify(bad)} naming the variable and the valid range`, () => {
      expect(() => heapRatio({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: bad })).to.throw(
        `HAPROXY_TEMPLATE_IC_HEAP_RATIO must be a number greater than 0 and at most 1 (a fraction of the container memory limit), got ${JSON.stringify(bad)}`,
      );
    });
  }
});

describe('heapPlan', () => {
  const root = cgroupRoots();

  it('sizes the heap to 0.9 of a cgroup v2 memory limit and reports both limits', () => {
    const plan = heapPlan({}, root(cgroupV2(String(512 * 1024 * 1024), '50000 100000')));
    expect(plan).to.deep.equal({
      maxOldSpaceMb: 460,
      memoryLimitBytes: 536_870_912,
      cpuLimit: 0.5,
      message: 'container limits (cgroup v2): memory 512 MiB, CPU 0.5; V8 heap limit 460 MiB (0.9 of the memory limit)',
    });
  });

  it('sizes the heap to the configured ratio of a cgroup v1 memory limit', () => {
    const plan = heapPlan({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: '0.5' }, root(cgroupV1(String(1024 * 1024 * 1024), '-1', '100000')));
    expect(plan.maxOldSpaceMb).to.equal(512);
    expect(plan.cpuLimit).to.equal(undefined);
    expect(plan.message).to.equal('container limits (cgroup v1): memory 1024 MiB, CPU unlimited; V8 heap limit 512 MiB (0.5 of the memory limit)');
  });

  it('keeps the default heap without a memory limit', () => {
    const plan = heapPlan({}, root(cgroupV2('max', '200000 100000')));
    expect(plan.maxOldSpaceMb).to.equal(undefined);
    expect(plan.message).to.equal('container limits (cgroup v2): memory unlimited, CPU 2; V8 keeps its default heap limit');
  });

  it('keeps the default heap outside a cgroup', () => {
    const dir = root({});
    expect(heapPlan({}, dir)).to.deep.equal({
      maxOldSpaceMb: undefined,
      memoryLimitBytes: undefined,
      cpuLimit: undefined,
      message: `no cgroup found under ${dir}; V8 keeps its default heap limit`,
    });
  });

  it('keeps a heap limit already given in execArgv or NODE_OPTIONS, so a re-executed process does not re-execute', () => {
    const dir = root(cgroupV2(String(512 * 1024 * 1024), 'max 100000'));
    for (const [env, execArgv] of [
      [{}, ['--max-old-space-size=460']],
      [{ NODE_OPTIONS: '--enable-source-maps --max-old-space-size=300' }, []],
    ] as const) {
      const plan = heapPlan(env, dir, execArgv);
      expect(plan.maxOldSpaceMb).to.equal(undefined);
      expect(plan.memoryLimitBytes).to.equal(536_870_912);
      expect(plan.message).to.match(/V8 heap limit kept as given by --max-old-space-size$/);
    }
  });

  it('checks the ratio even when there is no limit to apply it to', () => {
    expect(() => heapPlan({ HAPROXY_TEMPLATE_IC_HEAP_RATIO: '2' }, root({}))).to.throw(/^HAPROXY_TEMPLATE_IC_HEAP_RATIO must be/);
  });

  it('refuses a heap too small to run the controller, saying what to raise', () => {
    expect(() => heapPlan({}, root(cgroupV2(String(32 * 1024 * 1024), 'max 100000')))).to.throw(
      'memory 32 MiB x HAPROXY_TEMPLATE_IC_HEAP_RATIO 0.9 leaves a 28 MiB heap; the controller needs at least 32 MiB: raise the container memory limit or the ratio',
    );
  });

  it('reads the limits of the machine it runs on without failing', () => {
    const plan = heapPlan({});
    expect(plan.message).to.match(/^(no cgroup found under \/sys\/fs\/cgroup|container limits \(cgroup v[12]\): )/);
    if (plan.maxOldSpaceMb !== undefined) expect(plan.maxOldSpaceMb).to.be.greaterThan(0);
  });
});

describe('nodeFlags', () => {
  const plan = (maxOldSpaceMb: number | undefined) => ({ maxOldSpaceMb, memoryLimitBytes: undefined, cpuLimit: undefined, message: '' });

  it('asks for the heap limit and a small young generation', () => {
    expect(nodeFlags(plan(460), {}, [])).to.deep.equal(['--max-old-space-size=460', '--max-semi-space-size=4']);
    expect(nodeFlags(plan(undefined), {}, [])).to.deep.equal(['--max-semi-space-size=4']);
  });

  it('asks for nothing the process already runs with, so it re-executes once at most', () => {
    expect(nodeFlags(plan(undefined), {}, ['--max-semi-space-size=4'])).to.deep.equal([]);
    expect(nodeFlags(plan(undefined), { NODE_OPTIONS: '--max-semi-space-size=8' }, [])).to.deep.equal([]);
  });
});
