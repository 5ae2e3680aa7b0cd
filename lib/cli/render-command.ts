import { resolve } from 'node:path';
import type { KubeObject } from '../pipeline/model.ts';
import { readManifests } from '../kube/manifests.ts';
import { selectionFor } from '../kube/select.ts';
import { checkConfig, haproxyBinary, refusedDirectives } from '../haproxy/check.ts';
import { readRefusal } from '../haproxy/refusal.ts';
import { classNote, ingressKey } from './migration-notes.ts';
import { errorMessage } from '../error-message.ts';
import { guardedDirectives } from '../config/guarded-directives.ts';
import { createRenderer, RenderError } from '../render/renderer.ts';
import { routingViews } from '../routing-view/routing-view.ts';
import { writeRenderedFiles } from '../render/write-files.ts';
import { buildStores } from '../store/build-stores.ts';
import { loadConfigFile } from './load-config-file.ts';
import type { CommandOutput } from './output.ts';

export interface RenderCommandOptions {
  readonly manifests: string;
  readonly out: string;
  readonly config: string | undefined;
}

/**
 * `render`: Kubernetes manifests in, haproxy.cfg with its maps, certificates
 * and general files out, laid out under --out as HAProxy will find them
 * (the render's base directory is --out itself).
 */
export async function renderCommand(options: RenderCommandOptions, output: CommandOutput): Promise<number> {
  const loaded = await loadConfigFile(options.config);
  if (!loaded.ok) {
    for (const error of loaded.errors) output.err(`error: ${error}\n`);
    return 1;
  }
  const { config } = loaded;
  const read = await readManifests(options.manifests).catch((error: unknown) => ({
    manifests: [],
    errors: [`${options.manifests}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : String(error)}`],
  }));
  if (read.errors.length > 0) {
    for (const error of read.errors) output.err(`error: ${error}\n`);
    return 1;
  }
  const objects = new Map<string, KubeObject[]>();
  for (const resource of config.watchedResources) {
    const selects = selectionFor(resource);
    objects.set(resource.name, read.manifests.map((m) => m.object).filter(selects));
  }
  const out = resolve(options.out);
  let rendered;
  try {
    rendered = createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, objects, config.ignoreFields), baseDir: out });
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    output.err(`error: the configuration cannot be rendered:\n${error.message}\n`);
    return 1;
  }
  // What it writes is meant for `haproxy -c`, which would run a lua-load: the guard decides first, as in the pipeline.
  const refused = refusedDirectives(rendered.files.config, config.allowDirectives);
  if (refused.length > 0) {
    for (const finding of refused) {
      const why = finding.always ? 'never allowed' : 'allowDirectives does not allow it';
      output.err(`error: haproxy.cfg:${finding.line}: ${finding.directive} ${guardedDirectives[finding.directive]}: ${JSON.stringify(finding.text)}; ${why}\n`);
    }
    return 1;
  }
  for (const problem of rendered.excluded) output.err(`excluded ${problem.object}: ${problem.field}: ${problem.message}\n`);
  for (const problem of rendered.warnings) output.err(`warning ${problem.object}: ${problem.field}: ${problem.message}\n`);
  for (const line of rendered.deprecations ?? []) output.err(`deprecated: ${line}\n`);
  // Left out by the view model without a word: every ingress-nginx Ingress on a first run.
  for (const { object } of read.manifests) {
    const note = object.kind === 'Ingress' ? classNote(object, config.ingress.className) : undefined;
    if (note !== undefined) output.err(`warning Ingress ${ingressKey(object)}: ${note}\n`);
  }
  const configFile = await writeRenderedFiles(out, rendered.files, config.dataplane);
  const count = [rendered.files.maps, rendered.files.certificates, rendered.files.files].reduce((n, g) => n + Object.keys(g).length, 1);
  // What it wrote is what HAProxy would be given: a configuration HAProxy refuses is a failure, told in its own words.
  const checked = await checkConfig(configFile, haproxyBinary(), { allowDirectives: config.allowDirectives }).catch((error: unknown) => ({
    valid: false,
    output: '',
    unavailable: errorMessage(error),
  }));
  if (!checked.valid) {
    if (checked.unavailable !== undefined) output.err(`error: the configuration written to ${out} could not be checked: ${checked.unavailable}\n`);
    else {
      const { message } = readRefusal({ output: checked.output, dir: out, files: rendered.files, origins: rendered.origins, dirs: config.dataplane });
      output.err(`error: haproxy -c refuses the configuration written to ${out}:\n${message}\n`);
    }
    return 1;
  }
  output.out(`rendered ${count} files from ${read.manifests.length} manifests into ${out}, and haproxy -c accepts them (${configFile})\n`);
  return 0;
}
