/**
 * Quarantine benchmark: 10k Ingresses (bench/world.ts) through the real
 * render and validate stages, with the real renderer and the real
 * `haproxy -c`, on the shipped configuration plus one template line that
 * turns an Ingress annotation into an `http-request deny` rule. One Ingress
 * then gets a status HAProxy refuses (999): it renders cleanly, HAProxy
 * refuses the configuration, the Ingress is quarantined and the rest
 * deployed.
 *
 * Printed as ratios to a plain change (one Ingress changed, rendered and
 * validated) in the same run:
 *   - the change that brings the bad object: target at most 2, one extra
 *     render and validation;
 *   - a change of another tenant while the object stays in quarantine:
 *     about 1, the quarantined object costs nothing more;
 *   - the change that fixes the object (it leaves quarantine): about 1.
 *
 * Run with `npm run bench`; BENCH_QUARANTINE_SIZE=1000 picks another size.
 */
import { readFileSync } from 'node:fs';
import { defer, filter, firstValueFrom, of, Subject } from 'rxjs';
import { defaultConfigPath } from '../lib/cli/package-root.ts';
import { loadControllerConfig } from '../lib/config/load.ts';
import { Validator } from '../lib/haproxy/validator.ts';
import type { KubeObject, Snapshot, Trigger, Validated } from '../lib/pipeline/model.ts';
import type { Outcome } from '../lib/pipeline/outcome.ts';
import { Quarantine } from '../lib/pipeline/quarantine.ts';
import { createRenderer } from '../lib/render/renderer.ts';
import { routingViews } from '../lib/routing-view/routing-view.ts';
import { buildStores } from '../lib/store/build-stores.ts';
import { render } from '../streams/render.ts';
import { validate } from '../streams/validate.ts';
import { endpointSliceObject, ingressObject, serviceObject } from './world.ts';

const SIZE = Number(process.env['BENCH_QUARANTINE_SIZE'] ?? 10_000);
const RUNS = 3;

const denyLine = [
  '      {{#resources.ingresses}}',
  '      {{#metadata.annotations.deny-status}}',
  '      http-request deny deny_status {{metadata.annotations.deny-status}} if { var(txn.host) -m str {{spec.rules.0.host}} }',
  '      {{/metadata.annotations.deny-status}}',
  '      {{/resources.ingresses}}',
].join('\n');

function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

/** Ingress i with a path of its own for `version`: every change is new content, never one validated before. */
function changedIngress(i: number, version: number): KubeObject {
  const object = ingressObject(i, version);
  const spec = object['spec'] as { rules: { http: { paths: unknown[] } }[] };
  const path = { path: `/r${version}`, pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { name: 'http' } } } };
  return { ...object, spec: { ...spec, rules: [{ ...spec.rules[0]!, http: { paths: [...spec.rules[0]!.http.paths, path] } }] } };
}

function withAnnotation(object: KubeObject, status: string, version: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(version), annotations: { 'deny-status': status } } };
}

async function main(): Promise<void> {
  const shipped = readFileSync(defaultConfigPath(), 'utf8');
  // The routing view under either name: `ingress` is its old one.
  const loaded = loadControllerConfig(shipped.replace(/^ {6}default_backend \{\{#(?:routes|ingress)\.defaultBackend\}\}/m, (line) => `${denyLine}\n${line}`));
  if (!loaded.ok) throw new Error(`the benchmark's configuration does not load:\n${loaded.errors.join('\n')}`);
  const { config } = loaded;
  const range = Array.from({ length: SIZE }, (_, i) => i);
  // A few Ingresses deny with a status HAProxy takes, so the template line renders lines of its own.
  const ingresses = range.map((i) => (i % 1000 === 7 ? withAnnotation(ingressObject(i), '403', 1) : ingressObject(i)));
  const stores = buildStores(
    config.watchedResources,
    new Map([
      ['ingresses', ingresses],
      ['services', range.map(serviceObject)],
      ['endpointslices', range.map((i) => endpointSliceObject(i))],
      ['secrets', []],
    ]),
    config.ignoreFields,
  );
  const ingressStore = stores.get('ingresses')!;

  const renderer = createRenderer(config, routingViews);
  const validator = new Validator({ allowDirectives: config.allowDirectives, dirs: config.dataplane });
  const counts = { renders: 0, validations: 0 };
  const renderEffect = (snapshot: Snapshot) =>
    defer(() => {
      counts.renders++;
      return of(renderer({ stores: snapshot.stores }));
    });
  const validateEffect = (rendered: Validated) =>
    defer(() => {
      counts.validations++;
      return validator.validate(rendered);
    });
  const outcomes: Outcome[] = [];
  const report = (outcome: Outcome) => void outcomes.push(outcome);
  const book = new Quarantine();
  const triggers = new Subject<Trigger>();
  const validated = new Subject<Validated>();
  triggers.pipe(render({ render: renderEffect, report, quarantine: book }), validate({ validate: validateEffect, report, quarantine: { book, render: renderEffect } })).subscribe(validated);

  let revision = 0;
  /** One change to the stores, then the time until its configuration is validated, and the work it took. */
  const step = async (change: () => void) => {
    change();
    counts.renders = 0;
    counts.validations = 0;
    revision++;
    const expected = revision;
    const next = firstValueFrom(validated.pipe(filter((candidate) => candidate.revision === expected)));
    const start = process.hrtime.bigint();
    triggers.next({ snapshot: { revision, stores, change: undefined }, changes: { count: 1, firstAt: Date.now(), refs: [] } });
    const delivered = await next;
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, delivered, ...counts };
  };

  const target = SIZE >> 1;
  let version = 1;
  const plainChange = () => ingressStore.upsert(changedIngress(target, ++version));
  // The first render and validation are cold: not measured.
  await step(() => undefined);
  await step(plainChange);
  const plain: number[] = [];
  for (let run = 0; run < RUNS; run++) plain.push((await step(plainChange)).ms);

  // Three rounds, each with another bad Ingress: brought in, left in quarantine while another change goes
  // through, then fixed. Medians, as for the plain change.
  const culprits: number[] = [];
  const meanwhile: number[] = [];
  const fixes: number[] = [];
  let work = { renders: 0, validations: 0, fixRenders: 0, fixValidations: 0 };
  for (let run = 0; run < RUNS; run++) {
    const bad = target + 1 + run;
    const before = outcomes.length;
    const culprit = await step(() => ingressStore.upsert(withAnnotation(ingressObject(bad), '999', 2)));
    const quarantined = outcomes.slice(before).filter((o): o is Extract<Outcome, { type: 'quarantined' }> => o.type === 'quarantined');
    if (quarantined.length !== 1 || quarantined[0]!.objects[0]?.object !== `Ingress ${ingressObject(bad).metadata.namespace}/app-${bad}`) {
      throw new Error(`expected app-${bad} quarantined, got ${JSON.stringify(quarantined.map((o) => o.objects))}`);
    }
    if (culprit.delivered.files.maps['host.map']?.includes(`app-${bad}.example.com`)) throw new Error('the quarantined Ingress is still routed');
    culprits.push(culprit.ms);
    meanwhile.push((await step(plainChange)).ms);
    const fixed = await step(() => ingressStore.upsert(withAnnotation(ingressObject(bad), '403', 3)));
    if (book.size !== 0) throw new Error('the fixed Ingress is still in quarantine');
    fixes.push(fixed.ms);
    work = { renders: culprit.renders, validations: culprit.validations, fixRenders: fixed.renders, fixValidations: fixed.validations };
  }

  const reference = median(plain);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(`quarantine at ${SIZE} Ingresses (render + haproxy -c through the render and validate stages):`);
  out(`  plain change (1 render, 1 validation):           ${reference.toFixed(0)} ms`);
  const row = (what: string, values: readonly number[], detail = '') => {
    const ms = median(values);
    out(`  ${what}: ${ms.toFixed(0)} ms${detail}  = ${(ms / reference).toFixed(2)} x plain`);
  };
  row('change bringing a bad object', culprits, `, ${work.renders} renders, ${work.validations} validations (target <= 2 x plain)`);
  row('another change, the object in quarantine', meanwhile);
  row('change fixing it (released, judged again)', fixes, `, ${work.fixRenders} render, ${work.fixValidations} validation`);
  triggers.complete();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
