import { expect } from 'chai';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { load } from 'js-yaml';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { root } from '../../.ci/generate-reference.ts';
import { loadControllerConfigObject } from '../../lib/config/load.ts';
import { renderChart, valueSets } from '../chart/helm.ts';
import { configMapData } from '../chart/manifests.ts';

/**
 * docs/reference/controller-config.schema.json, the JSON Schema an editor
 * checks a configuration with, generated from lib/config/schema.ts (its
 * freshness is spec/docs/reference.spec.ts's): the configurations the
 * project ships fit it, and mistakes the loader refuses it refuses too.
 */
describe('the controller configuration JSON Schema (docs/reference/controller-config.schema.json)', function () {
  // Rendering the chart runs helm.
  this.timeout(60_000);

  let validate: ValidateFunction;
  before(async () => {
    const schema = JSON.parse(await readFile(join(root, 'docs/reference/controller-config.schema.json'), 'utf8')) as object;
    validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
  });

  const problems = (document: unknown) => (validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`));

  for (const file of ['templates/config.yaml', 'examples/custom-crd/config.yaml']) {
    it(`fits ${file}`, async () => {
      expect(problems(load(await readFile(join(root, file), 'utf8')))).to.deep.equal([]);
    });
  }

  it("fits the chart's configuration, by default and extended by values", async () => {
    for (const values of [valueSets.defaults, valueSets.extendedConfig]) {
      const chart = await renderChart(values);
      expect(problems(load(configMapData(chart.one('ConfigMap', 'haproxy-config'), 'config.yaml')))).to.deep.equal([]);
    }
  });

  it('refuses what the loader refuses: an unknown field, a port out of range, a duration without unit, an unknown assertion type, no haproxyConfig', async () => {
    const shipped = load(await readFile(join(root, 'templates/config.yaml'), 'utf8')) as Record<string, unknown>;
    const wrong: Record<string, unknown>[] = [
      { ...shipped, debounse: '1s' },
      { ...shipped, dataplane: { port: 70_000 } },
      { ...shipped, maxWait: '5' },
      { ...shipped, validationTests: [{ name: 'x', assertions: [{ type: 'includes', pattern: 'x' }] }] },
      { ...shipped, templates: { maps: {} } },
    ];
    for (const document of wrong) {
      expect(loadControllerConfigObject(document).ok, JSON.stringify(document).slice(0, 80)).to.equal(false);
      expect(problems(document), JSON.stringify(document).slice(0, 80)).to.not.deep.equal([]);
    }
  });
});
