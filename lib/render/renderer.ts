import type { ControllerConfig } from '../config/types.ts';
import type { KubeObject, Peer, Problem, RenderedFiles, RenderOutput, StoreReader } from '../pipeline/model.ts';
import { CompactOrigins, type FileOrigins } from './line-origins.ts';
import { AccessTracker, createResourceViews } from './resource-views.ts';
import { LOG_FORMAT, QUOTED, SafeWriter, type Violation } from './safe-writer.ts';
import type { RenderContext } from './template-view.ts';
import { DeprecatedNames } from './deprecated-names.ts';
import type { ProvidedView, RendererViews } from './views.ts';
import type { Template } from '../config/template.ts';
import { hideObjects } from '../pipeline/quarantine.ts';
import { CONTROLLER_LUA } from '../lua/controller-scripts.ts';

/** A `lua-load` line naming a script of the controller's (the directive guard lets these through), with the file's name. */
const LOADS_CONTROLLER_LUA = /^\s*lua-load\s+\S*\/([^/\s]+)\s*$/gm;

export interface RenderRequest {
  readonly stores: ReadonlyMap<string, StoreReader>;
  /**
   * Where the files will live; relative paths in the configuration resolve
   * against it (`default-path origin`). Defaults to `dataplane.baseDir`.
   */
  readonly baseDir?: string;
  /** The HAProxy instances that share counters (the `peers` section), as fleetPeers lists them; none by default. */
  readonly peers?: readonly Peer[];
}

/** A render that cannot produce a configuration at all: a template inserts an unsafe value of its own. */
export class RenderError extends Error {
  override readonly name = 'RenderError';
}

export type { RenderOutput };

export type Renderer = (request: RenderRequest) => RenderOutput;

function describe(violation: Violation): string {
  return `${violation.template}: line ${violation.line}: ${violation.tag}: value ${violation.reason}`;
}

/** The names the renderer gives every template itself: no view may take one. */
const OWN_NAMES: ReadonlySet<string> = new Set<keyof RenderContext>(['templateValues', 'paths', 'resources', 'fleet', 'escape']);

/** The views' names, checked: each once, none of the renderer's own, every old name for a view there is. */
function checkedNames(views: RendererViews): ReadonlyMap<string, string> {
  const names = Object.keys(views.views);
  const deprecated = new Map(Object.entries(views.deprecatedNames ?? {}));
  for (const name of [...names, ...deprecated.keys()]) {
    if (OWN_NAMES.has(name)) throw new Error(`a view cannot be named ${name}: templates read the renderer's own ${name} under it`);
  }
  for (const [old, current] of deprecated) {
    if (names.includes(old)) throw new Error(`${old} is both a view and an old name of ${current}`);
    if (!names.includes(current)) throw new Error(`${old} is an old name of ${current}, which is no view`);
  }
  return deprecated;
}

/** One list of the views' problems: a view's own list while it is the only view (the same list, render after render, when nothing changed). */
function joined(provided: readonly ProvidedView[], of: (view: ProvidedView) => readonly Problem[] | undefined): readonly Problem[] {
  return provided.length === 1 ? (of(provided[0]!) ?? []) : provided.flatMap((view) => of(view) ?? []);
}

/**
 * Renders every template of a configuration, with the views it is given
 * (see views.ts) beside its own names. A value from a Kubernetes object
 * that is unsafe where a template puts it excludes that object: the render
 * runs again without it, the views included, until a pass is clean, so one
 * bad object never takes the rest of the configuration down with it.
 */
export function createRenderer(config: ControllerConfig, views: RendererViews): Renderer {
  const { templates, dataplane } = config;
  const partials = Object.fromEntries([...templates.partials].map(([name, template]) => [name, template.source]));
  const deprecated = checkedNames(views);
  const deprecatedNames = deprecated.size > 0 ? new DeprecatedNames(deprecated) : undefined;
  const tracker = new AccessTracker();
  const writer = new SafeWriter(tracker, deprecatedNames);
  const providers = Object.entries(views.views).map(([name, provider]) => ({ name, view: provider(config) }));
  const escape = Object.freeze({ logFormat: LOG_FORMAT, quoted: QUOTED });

  const provide = (stores: ReadonlyMap<string, StoreReader>): readonly ProvidedView[] => providers.map(({ view }) => view(stores));
  const namedViews = (provided: readonly ProvidedView[]): Record<string, unknown> => {
    const named: Record<string, unknown> = {};
    providers.forEach(({ name }, index) => (named[name] = provided[index]!.value));
    for (const [old, current] of deprecated) named[old] = named[current];
    return named;
  };

  /** Each view's outcome by the view's name; undefined when no view gives one. */
  const outcomesOf = (provided: readonly ProvidedView[]): Readonly<Record<string, object>> | undefined => {
    const found: Record<string, object> = {};
    providers.forEach(({ name }, index) => {
      const outcome = provided[index]!.outcome;
      if (outcome !== undefined) found[name] = outcome;
    });
    return Object.keys(found).length > 0 ? found : undefined;
  };

  return (request) => {
    const base = request.baseDir ?? dataplane.baseDir;
    let provided = provide(request.stores);
    // Status reads what the views made of the objects as given: an object excluded below still has its status written.
    const outcomes = outcomesOf(provided);
    const paths = {
      base,
      maps: dataplane.mapsDir,
      ssl: dataplane.certificatesDir,
      general: dataplane.generalDir,
    };
    const excludedObjects = new Map<KubeObject, Problem>();

    const renderPass = () => {
      tracker.reset();
      writer.violations = [];
      const view: RenderContext & Record<string, unknown> = {
        ...namedViews(provided),
        templateValues: config.templateValues,
        paths,
        resources: createResourceViews({
          resources: config.watchedResources,
          stores: request.stores,
          excluded: new Set(excludedObjects.keys()),
          tracker,
        }),
        fleet: { peers: request.peers ?? [] },
        escape,
      };
      const origins = new Map<string, FileOrigins>();
      const render = (target: string, template: Template, percent: 'admit' | 'refuse' = 'refuse') => {
        const { text, origins: lines } = writer.renderFile(template.name, template.tokens, view, partials, template.source, { percent });
        origins.set(target, lines);
        return text;
      };
      const renderAll = (dir: string, group: ReadonlyMap<string, Template>, percent?: 'admit') =>
        Object.fromEntries([...group].map(([file, template]) => [file, render(`${dir}/${file}`, template, percent)]));
      const files: RenderedFiles = {
        config: render('haproxy.cfg', templates.haproxyConfig),
        // A map file is data: "%" means nothing there (percent-encoded paths).
        maps: renderAll(dataplane.mapsDir, templates.maps, 'admit'),
        certificates: renderAll(dataplane.certificatesDir, templates.certificates),
        files: renderAll(dataplane.generalDir, templates.files),
      };
      return { files, origins: new CompactOrigins(origins), violations: writer.violations };
    };

    for (;;) {
      const { files, origins, violations } = renderPass();
      let excludedMore = false;
      for (const violation of violations) {
        const object = violation.provenance?.object;
        if (!object || excludedObjects.has(object)) continue;
        excludedObjects.set(object, {
          object: violation.provenance!.label,
          field: violation.provenance!.field,
          message: `value ${violation.reason} (${violation.template}: line ${violation.line}: ${violation.tag})`,
        });
        excludedMore = true;
      }
      if (excludedMore) {
        // An excluded object is left out of the views too: its routes and certificates go with it.
        provided = provide(hideObjects(request.stores, new Set(excludedObjects.keys())));
        continue;
      }
      const unattributed = violations.filter((violation) => !violation.provenance);
      if (unattributed.length > 0) throw new RenderError(unattributed.map(describe).join('\n'));
      const certificates = { ...files.certificates };
      const general = { ...files.files };
      for (const view of provided) {
        for (const certificate of view.certificates ?? []) certificates[certificate.file] ??= certificate.pem;
        for (const file of view.generalFiles ?? []) general[file.file] ??= file.pem;
      }
      // Always the controller's own scripts, whatever else might stand under their names (see lib/lua/controller-scripts.ts).
      for (const [, file] of files.config.matchAll(LOADS_CONTROLLER_LUA)) {
        const script = CONTROLLER_LUA.get(file!);
        if (script !== undefined) general[file!] = script;
      }
      const found = deprecatedNames?.take() ?? [];
      return {
        files: { ...files, certificates, files: general },
        excluded: [...provided.flatMap((view) => view.excluded ?? []), ...excludedObjects.values()],
        warnings: joined(provided, (view) => view.warnings),
        origins,
        ...(found.length > 0 ? { deprecations: found } : {}),
        ...(outcomes ? { outcomes } : {}),
      };
    }
  };
}
