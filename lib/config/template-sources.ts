import { dump, load } from 'js-yaml';

/** A template kept in a ConfigMap or Secret key instead of the controller configuration (GitOps: Flux syncs it from Git). */
export interface TemplateSource {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  readonly key: string;
  /** Where the configuration refers to it, e.g. `templates.maps.host.map`. */
  readonly at: string;
}

/** The fields a template given by reference is written with, and the kind of object each names. */
export const REFERENCE_FIELDS: Readonly<Record<string, TemplateSource['kind']>> = { fromConfigMap: 'ConfigMap', fromSecret: 'Secret' };
const GROUPS = ['partials', 'maps', 'files', 'certificates'] as const;

type Slot = { readonly holder: Record<string, unknown>; readonly field: string; readonly at: string };

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function slots(document: Record<string, unknown>): Slot[] {
  const templates = record(document['templates']);
  if (!templates) return [];
  const found: Slot[] = [{ holder: templates, field: 'haproxyConfig', at: 'templates.haproxyConfig' }];
  for (const group of GROUPS) {
    const members = record(templates[group]);
    for (const name of Object.keys(members ?? {})) found.push({ holder: members!, field: name, at: `templates.${group}.${name}` });
  }
  return found;
}

/**
 * Finds the templates given as `{fromConfigMap: {name, key}}` or
 * `{fromSecret: {name, key}}` and substitutes their text, read through
 * `lookup`, giving a configuration text the loader takes as usual. A
 * missing object or key is an error naming the template that refers to it;
 * the caller keeps the running configuration. A template with no Mustache
 * tags is used as it stands, so a complete haproxy.cfg can be referenced.
 */
export function resolveTemplateSources(
  text: string,
  lookup: (source: TemplateSource) => string | undefined,
): { readonly text: string; readonly sources: readonly TemplateSource[]; readonly errors: readonly string[] } {
  let document: Record<string, unknown> | undefined;
  try {
    document = record(load(text));
  } catch {
    // The loader reports YAML errors with their position; nothing to resolve here.
    return { text, sources: [], errors: [] };
  }
  if (!document) return { text, sources: [], errors: [] };
  const sources: TemplateSource[] = [];
  const errors: string[] = [];
  for (const slot of slots(document)) {
    const value = record(slot.holder[slot.field]);
    if (!value) continue;
    const fields = Object.keys(value).filter((field) => field in REFERENCE_FIELDS);
    if (fields.length !== 1 || Object.keys(value).length !== 1) continue;
    const field = fields[0]!;
    const reference = record(value[field]);
    const name = reference?.['name'];
    const key = reference?.['key'];
    if (typeof name !== 'string' || name === '' || typeof key !== 'string' || key === '') {
      errors.push(`${slot.at}.${field}: needs a name and a key`);
      continue;
    }
    const source: TemplateSource = { kind: REFERENCE_FIELDS[field]!, name, key, at: slot.at };
    sources.push(source);
    const content = lookup(source);
    if (content === undefined) errors.push(`${slot.at}: ${source.kind} ${name} has no key ${key}`);
    else slot.holder[slot.field] = content;
  }
  if (sources.length === 0) return { text, sources, errors };
  return { text: dump(document, { lineWidth: -1, noRefs: true }), sources, errors };
}
