import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { chartDirectory } from './helm.ts';

interface SchemaNode {
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
}

/** The values a user sets, by dotted key: the schema's leaves (objects it leaves free-form are one value). */
function leaves(node: SchemaNode, values: unknown, prefix: string): Map<string, { description: string | undefined; value: unknown }> {
  const found = new Map<string, { description: string | undefined; value: unknown }>();
  if (node.properties === undefined) return found.set(prefix, { description: node.description, value: values });
  for (const [key, child] of Object.entries(node.properties)) {
    if (prefix === '' && key === 'global') continue;
    const value = typeof values === 'object' && values !== null ? (values as Record<string, unknown>)[key] : undefined;
    for (const [path, leaf] of leaves(child, value, prefix === '' ? key : `${prefix}.${key}`)) found.set(path, leaf);
  }
  return found;
}

describe('the chart README', () => {
  let documented: Map<string, string>;
  let values: Map<string, { description: string | undefined; value: unknown }>;
  before(async () => {
    const readme = await readFile(join(chartDirectory, 'README.md'), 'utf8');
    documented = new Map([...readme.matchAll(/^\| `([^`]+)` \| [^|]* \| (.*) \|$/gm)].map((row) => [row[1]!, row[2]!]));
    const schema = JSON.parse(await readFile(join(chartDirectory, 'values.schema.json'), 'utf8')) as SchemaNode;
    values = leaves(schema, load(await readFile(join(chartDirectory, 'values.yaml'), 'utf8')), '');
  });

  it('lists every value of values.schema.json, and nothing else', () => {
    expect([...documented.keys()]).to.deep.equal([...values.keys()]);
  });

  it('gives every value a description in the schema', () => {
    const undescribed = [...values].filter(([, leaf]) => !leaf.description).map(([path]) => path);
    expect(undescribed).to.deep.equal([]);
  });

  it('shows the default of every scalar value as values.yaml has it', () => {
    for (const [path, { value }] of values) {
      if (value === null || typeof value === 'object') continue;
      const shown = typeof value === 'string' ? `\`"${value}"\`` : `\`${String(value)}\``;
      expect(documented.get(path), path).to.equal(shown);
    }
  });
});
