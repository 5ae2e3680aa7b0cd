/**
 * The controller configuration's reference page and JSON Schema, both
 * written from the schema the loader reads settings by
 * (lib/config/schema.ts), so neither can say what the loader does not do.
 */
import { runDefaults } from '../lib/cli/run-settings.ts';
import { longestDuration } from '../lib/config/readers.ts';
import { controllerConfigSchema } from '../lib/config/schema.ts';
import type { Setting } from '../lib/config/schema-types.ts';
import { table } from './markdown-table.ts';
import { REFERENCE_FIELDS } from '../lib/config/template-sources.ts';

/** A setting as the reference lists it: its path as a user writes it, and the setting. */
export interface ConfigRow {
  readonly path: string;
  readonly setting: Setting;
  /** For a field of an assertion: the assertion types that take it. */
  readonly only?: readonly string[];
}

/** Every setting under `setting`, depth first in the order the schema declares them. */
export function configRows(setting: Setting, path = ''): ConfigRow[] {
  const under = (child: Setting, childPath: string): ConfigRow[] => [{ path: childPath, setting: child }, ...configRows(child, childPath)];
  const joined = (key: string) => (path === '' ? key : `${path}.${key}`);
  switch (setting.kind) {
    case 'section':
      return Object.entries(setting.fields).flatMap(([key, child]) => under(child, joined(key)));
    case 'variants':
      return Object.entries(setting.fields).flatMap(([key, child]) => {
        const types = Object.keys(setting.variants);
        // The variants' names are the values `type` takes.
        if (key === 'type' && child.kind === 'string') return [{ path: joined(key), setting: { ...child, values: types } }];
        return [{ path: joined(key), setting: child, only: types.filter((type) => setting.variants[type]!.includes(key)) }, ...configRows(child, joined(key))];
      });
    case 'list':
      return isMapping(setting.item) ? configRows(setting.item, `${path}[]`) : [];
    case 'named':
      return under(setting.item, `${path}.<name>`);
    default:
      return [];
  }
}

const isMapping = (setting: Setting) => setting.kind === 'section' || setting.kind === 'variants';

const code = (text: string) => `\`${text}\``;

/** A value as YAML writes it inline; a string that is not one plain word is double-quoted, as in JSON. */
function yaml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(yaml).join(', ')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([key, item]) => `${yaml(key)}: ${yaml(item)}`)
      .join(', ')}}`;
  return typeof value === 'string' && !/^[\w./-]+$/.test(value) ? JSON.stringify(value) : String(value);
}

function typeName(setting: Setting): string {
  switch (setting.kind) {
    case 'path':
      return 'JSONPath';
    case 'list':
      return `list of ${typeName(setting.item)}`;
    case 'named':
      return `mapping of name to ${typeName(setting.item)}`;
    case 'section':
    case 'variants':
      return 'mapping';
    case 'mapping':
      return 'mapping (any content)';
    default:
      return setting.kind;
  }
}

function allowed(setting: Setting): string {
  switch (setting.kind) {
    case 'integer':
      return setting.max === undefined ? `at least ${setting.min}` : `${setting.min} to ${setting.max}`;
    case 'duration':
      return `${setting.positive ? 'longer than 0s, ' : ''}at most ${longestDuration}`;
    case 'string':
      return setting.values?.map(code).join(', ') ?? setting.rule?.description ?? '';
    case 'list': {
      const each = isMapping(setting.item) ? '' : allowed(setting.item);
      return [setting.minItems === undefined ? '' : `at least ${setting.minItems}`, each === '' ? '' : `each: ${each}`].filter(Boolean).join('; ');
    }
    case 'named':
      return [setting.minItems === undefined ? '' : `at least ${setting.minItems}`, `names: ${setting.name.description}`].filter(Boolean).join('; ');
    default:
      return '';
  }
}

function defaultCell(setting: Setting): string {
  if (setting.required) return 'required';
  if (setting.defaultText !== undefined) return setting.defaultText;
  return 'default' in setting && setting.default !== undefined ? code(yaml(setting.default)) : '';
}

export function configurationPage(generated: string): string {
  const rows = configRows(controllerConfigSchema).map(({ path, setting, only }) => [
    code(path),
    typeName(setting),
    defaultCell(setting),
    [allowed(setting), only === undefined ? '' : `for ${only.map(code).join(', ')}`].filter(Boolean).join('; '),
    setting.description,
    setting.example === undefined ? '' : code(yaml(setting.example)),
  ]);
  const types = controllerConfigSchema.fields.validationTests.item.fields.assertions.item;
  return `${generated}# Controller configuration

Every setting of the controller configuration (the \`config.yaml\` key of the controller ConfigMap, or
\`--config FILE\`), as the loader reads it. A path is written as the YAML nests it: \`<name>\` is a name the
configuration chooses, \`[]\` an item of a list. A setting that is not required may be left out (or left
empty, \`key:\` with nothing after it) for its default; a field the loader does not know is an error.
Durations are Go-style: \`500ms\`, \`2s\`, \`1m30s\`. An assertion's \`type\` is one of
${Object.keys(types.variants).map(code).join(', ')} and decides which other fields it takes.
How the settings work together, with examples: [Controller configuration](../configuration.md).

The controller's own ports (health \`${runDefaults.healthPort}\`, metrics \`${runDefaults.metricsPort}\`, admission webhook \`${runDefaults.webhookPort}\`) are flags of
\`run\`: see [Command line](cli.md#run).

For editors: [controller-config.schema.json](controller-config.schema.json) is the same schema as a JSON
Schema (draft 2020-12); with the YAML language server, start the file with
\`# yaml-language-server: $schema=<path or URL of controller-config.schema.json>\`.

${table(['setting', 'type', 'default', 'allowed', 'meaning', 'example'], rows)}
`;
}

type JsonSchema = Record<string, unknown>;

/** `[text](link)` as `text`: the links of a description lead nowhere from an editor. */
const plain = (text: string) => text.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');

const durationPattern = '^(?:(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:ns|us|µs|μs|ms|s|m|h))+$';

function templateJson(): JsonSchema {
  const reference = (field: string): JsonSchema => ({
    type: 'object',
    properties: {
      [field]: {
        type: 'object',
        description: `The ${REFERENCE_FIELDS[field]} and its key holding the template.`,
        properties: { name: { type: 'string', minLength: 1 }, key: { type: 'string', minLength: 1 } },
        required: ['name', 'key'],
        additionalProperties: false,
      },
    },
    required: [field],
    additionalProperties: false,
  });
  return { anyOf: [{ type: 'string' }, ...Object.keys(REFERENCE_FIELDS).map(reference)] };
}

function objectJson(fields: Readonly<Record<string, Setting>>): JsonSchema {
  const required = Object.entries(fields)
    .filter(([, child]) => child.required)
    .map(([key]) => key);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(fields).map(([key, child]) => [key, settingJson(child)])),
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
}

function shapeJson(setting: Setting): JsonSchema {
  switch (setting.kind) {
    case 'integer':
      return { type: 'integer', minimum: setting.min, ...(setting.max === undefined ? {} : { maximum: setting.max }) };
    case 'boolean':
      return { type: 'boolean' };
    case 'duration':
      return { type: 'string', pattern: durationPattern };
    case 'string':
      return { type: 'string', ...(setting.values === undefined ? {} : { enum: setting.values }) };
    case 'path':
      return { type: 'string', minLength: 1 };
    case 'template':
      return templateJson();
    case 'list':
      return { type: 'array', items: settingJson(setting.item), ...(setting.minItems === undefined ? {} : { minItems: setting.minItems }) };
    case 'named':
      return { type: 'object', additionalProperties: settingJson(setting.item), ...(setting.minItems === undefined ? {} : { minProperties: setting.minItems }) };
    case 'section':
      return objectJson(setting.fields);
    case 'mapping':
      return { type: 'object' };
    case 'variants':
      return {
        type: 'object',
        required: ['type'],
        oneOf: Object.entries(setting.variants).map(([type, keys]) => {
          const fields = Object.fromEntries(keys.map((key) => [key, setting.fields[key]!]));
          const shape = objectJson({ type: setting.fields['type']!, ...fields });
          return { ...shape, properties: { ...(shape['properties'] as JsonSchema), type: { const: type } } };
        }),
      };
  }
}

function settingJson(setting: Setting): JsonSchema {
  const example = setting.example === undefined ? {} : { examples: [setting.example] };
  const fallback = 'default' in setting && setting.default !== undefined ? { default: setting.default } : {};
  return { description: plain(setting.description), ...fallback, ...example, ...shapeJson(setting) };
}

export function configurationJsonSchema(): string {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $comment: 'Generated by `npm run docs:reference` from lib/config/schema.ts: edit that, not this file.',
    title: 'haproxy-template-ic controller configuration',
    ...settingJson(controllerConfigSchema),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
