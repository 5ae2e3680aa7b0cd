import type { ControllerConfig } from '../config/types.ts';
import type { KubeObject, Peer, Problem, RenderedFiles, RenderOutput, StoreReader } from '../pipeline/model.ts';
import { CompactOrigins, type FileOrigins } from './line-origins.ts';
import { buildIngressModel, IngressModelCache } from '../map-model/view-model.ts';
import { ingressSources, RouteSourcesCache } from '../routing-view/ingress-sources.ts';
import { AccessTracker, createResourceViews } from './resource-views.ts';
import { LOG_FORMAT, QUOTED, SafeWriter, type Violation } from './safe-writer.ts';
import type { TemplateView } from './template-view.ts';
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

/**
 * Renders every template of a configuration. A value from a Kubernetes
 * object that is unsafe where a template puts it excludes that object: the
 * render runs again without it, until a pass is clean, so one bad object
 * never takes the rest of the configuration down with it.
 */
export function createRenderer(config: ControllerConfig): Renderer {
  const { templates, dataplane } = config;
  const partials = Object.fromEntries([...templates.partials].map(([name, template]) => [name, template.source]));
  const tracker = new AccessTracker();
  const writer = new SafeWriter(tracker);
  const ingressCache = new IngressModelCache();
  const routeSourcesCache = new RouteSourcesCache();
  const escape = Object.freeze({ logFormat: LOG_FORMAT, quoted: QUOTED });

  const ingressModel = (stores: ReadonlyMap<string, StoreReader>): TemplateView['ingress'] => {
    const sources = ingressSources(config, stores, routeSourcesCache);
    return sources ? buildIngressModel(sources, ingressCache) : undefined;
  };

  return (request) => {
    const base = request.baseDir ?? dataplane.baseDir;
    let ingress = ingressModel(request.stores);
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
      const view: TemplateView = {
        templateValues: config.templateValues,
        paths,
        resources: createResourceViews({
          resources: config.watchedResources,
          stores: request.stores,
          excluded: new Set(excludedObjects.keys()),
          tracker,
        }),
        ingress,
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
        // An excluded object is left out of the Ingress view model too: its routes and certificates go with it.
        ingress = ingressModel(hideObjects(request.stores, new Set(excludedObjects.keys())));
        continue;
      }
      const unattributed = violations.filter((violation) => !violation.provenance);
      if (unattributed.length > 0) throw new RenderError(unattributed.map(describe).join('\n'));
      const certificates = { ...files.certificates };
      for (const certificate of ingress?.certificates ?? []) certificates[certificate.file] ??= certificate.pem;
      for (const certificate of ingress?.l4.certificates ?? []) certificates[certificate.file] ??= certificate.pem;
      const general = { ...files.files };
      for (const ca of ingress?.caCertificates ?? []) general[ca.file] ??= ca.pem;
      // Always the controller's own scripts, whatever else might stand under their names (see lib/lua/controller-scripts.ts).
      for (const [, file] of files.config.matchAll(LOADS_CONTROLLER_LUA)) {
        const script = CONTROLLER_LUA.get(file!);
        if (script !== undefined) general[file!] = script;
      }
      return {
        files: { ...files, certificates, files: general },
        excluded: [...(ingress?.excluded ?? []), ...excludedObjects.values()],
        warnings: ingress?.warnings ?? [],
        origins,
      };
    }
  };
}
