import type { ControllerConfig, WatchedResource } from '../config/types.ts';
import type { Endpoint, Problem, RenderedFiles, StoreReader } from '../pipeline/model.ts';
import type { Template } from '../config/template.ts';
import type { EndpointState } from './endpoint-states.ts';

/**
 * What the debug endpoints show, as plain JSON-able values. Nothing here
 * redacts: the server passes every view through the redactor.
 */

const sources = (paths: readonly { readonly source: string }[]) => paths.map((path) => path.source);
const templateSources = (templates: ReadonlyMap<string, Template>) => Object.fromEntries([...templates].map(([name, t]) => [name, t.source]));

/** The controller configuration in force, as loaded: paths and templates as written, durations in ms. */
export function configView(config: ControllerConfig): Record<string, unknown> {
  return {
    podSelector: config.podSelector,
    dataplane: config.dataplane,
    pipeline: config.pipeline,
    watchedResources: config.watchedResources.map((resource) => ({
      name: resource.name,
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      resource: resource.resource,
      namespace: resource.namespace,
      labelSelector: resource.labelSelector,
      fieldSelector: resource.fieldSelector.map(({ path, operator, value }) => `${path.source}${operator}${value}`),
      indexBy: sources(resource.indexBy),
      relations: resource.relations.map((relation) => ({ name: relation.name, resource: relation.resource, keys: sources(relation.keys) })),
      validationWebhook: resource.validationWebhook,
    })),
    ignoreFields: sources(config.ignoreFields),
    ingress: config.ingress,
    templateValues: config.templateValues,
    templates: {
      haproxyConfig: config.templates.haproxyConfig.source,
      partials: templateSources(config.templates.partials),
      maps: templateSources(config.templates.maps),
      files: templateSources(config.templates.files),
      certificates: templateSources(config.templates.certificates),
    },
    validationTests: config.validationTests.map((test) => ({ name: test.name, description: test.description, assertions: test.assertions.length })),
    allowDirectives: config.allowDirectives,
  };
}

export interface LastRender {
  readonly revision: number;
  readonly hash: string;
  readonly files: RenderedFiles;
  readonly excluded: readonly Problem[];
  readonly warnings: readonly Problem[];
}

/** The latest verdict: when, on which configuration, and HAProxy's message unless it was valid. */
export interface ValidationState {
  readonly status: 'valid' | 'invalid' | 'unavailable';
  readonly revision: number;
  readonly hash: string;
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly message?: string;
}

/**
 * The last configuration rendered (or rendered again without quarantined
 * objects), the objects in quarantine, and the latest verdict.
 */
export function renderedView(last: LastRender | undefined, quarantined: readonly Problem[] = [], validation?: ValidationState): Record<string, unknown> {
  if (!last) return { rendered: false, quarantined, validation: validation ?? null };
  return {
    revision: last.revision,
    hash: last.hash,
    excluded: last.excluded,
    warnings: last.warnings,
    quarantined,
    validation: validation ? { ...validation, at: new Date(validation.at).toISOString() } : null,
    files: { 'haproxy.cfg': last.files.config, maps: last.files.maps, certificates: last.files.certificates, files: last.files.files },
  };
}

export function endpointsView(endpoints: readonly Endpoint[], states: readonly EndpointState[], details: ReadonlyMap<string, unknown>): Record<string, unknown>[] {
  const byId = new Map(states.map((state) => [state.endpoint, state]));
  const ids = [...new Set([...endpoints.map((e) => e.id), ...byId.keys()])];
  const urls = new Map(endpoints.map((e) => [e.id, e.url]));
  return ids.map((id) => ({
    ...(byId.get(id) ?? { endpoint: id }),
    url: urls.get(id),
    current: urls.has(id),
    ...(details.has(id) ? { details: details.get(id) } : {}),
  }));
}

/** Per watched type: how many objects, which index keys they are under (the first `limit` of them). */
export function resourcesView(stores: ReadonlyMap<string, StoreReader> | undefined, watched: readonly WatchedResource[], limit: number): Record<string, unknown> {
  if (!stores) return { synced: false, types: [] };
  const byName = new Map(watched.map((resource) => [resource.name, resource]));
  return {
    synced: true,
    types: [...stores].map(([type, store]) => {
      const indexBy = byName.get(type)?.indexBy ?? [];
      const objects = store.list();
      return {
        type,
        count: store.size,
        indexBy: sources(indexBy),
        keys: objects.slice(0, limit).map((object) => indexBy.map((path) => path.get(object) ?? null)),
        truncated: objects.length > limit,
      };
    }),
  };
}
