import type { Peer } from '../pipeline/model.ts';

/**
 * The names every template reads, whatever views the renderer is given
 * (createRenderer builds them); the views add theirs beside them (the
 * shipped configuration's: TemplateView, lib/routing-view/template-view.ts).
 */
export interface RenderContext {
  /** The configuration's `templateValues`: free values (ports, addresses...), inserted only where the template puts them. */
  readonly templateValues: Readonly<Record<string, unknown>>;
  readonly paths: TemplatePaths;
  /**
   * The objects of each watched resource by its name under
   * `watchedResources`, sorted by namespace and name, excluded objects left
   * out. Every string read from them is checked where the template writes it.
   */
  readonly resources: Readonly<Record<string, readonly ResourceItem[]>>;
  readonly fleet: TemplateFleet;
  readonly escape: EscapeSections;
}

/** The HAProxy instances the configuration is rendered for. */
export interface TemplateFleet {
  /**
   * Every HAProxy of the fleet, sorted by name, for a `peers` section that
   * shares stick tables: a pod by its pod name (its hostname, the name
   * HAProxy gives itself) at its pod IP, a fixed Data Plane API URL by its
   * host. Empty in local mode, whose one HAProxy shares with nobody.
   */
  readonly peers: readonly Peer[];
}

/** Where the files of this render live. */
export interface TemplatePaths {
  /** The base directory of this render: start the configuration with `default-path origin {{paths.base}}`. */
  readonly base: string;
  /** The maps directory, relative to `base`: `{{paths.base}}/{{paths.maps}}/host.map`. */
  readonly maps: string;
  /** The certificates directory, relative to `base`. */
  readonly ssl: string;
  /** The general files directory, relative to `base`: `{{paths.general}}/404.http`. */
  readonly general: string;
}

/** One watched object, read-only, with what the renderer adds to it. */
export interface ResourceItem {
  /**
   * Its annotations by normalised name: every character but ASCII letters,
   * digits and `_` becomes `_` (`haproxy_org_timeout_server`), since
   * Mustache splits names on dots; where two names normalise alike, the
   * first in name order.
   */
  readonly annotations: Readonly<Record<string, string>>;
  /** Its annotations as `{name, value}` in name order. */
  readonly annotationList: readonly { readonly name: string; readonly value: string }[];
  /** The object's own fields (`metadata`, `spec`...), and each relation declared for its resource, by name: the related objects, looked up through their index. */
  readonly [field: string]: unknown;
}

/** Sections that change how the values inside them are written. */
export interface EscapeSections {
  /** `{{#escape.logFormat}}...{{/escape.logFormat}}`: a value may hold `%`, and every `%` of the values inside is written `%%` (log-format arguments). */
  readonly logFormat: object;
  /** `{{#escape.quoted}}...{{/escape.quoted}}`: every value inside is written as one double-quoted HAProxy word holding exactly the value. */
  readonly quoted: object;
}
