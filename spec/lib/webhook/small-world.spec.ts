import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { RenderOutput } from '../../../lib/pipeline/model.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { IngressNeighbourhood } from '../../../lib/webhook/neighbourhood.ts';
import { renderWorld, smallWorld, unionOf, worldRenderer, type World } from '../../../lib/webhook/small-world.ts';
import { initialWorld, randomChanges } from '../ingress/random-world.ts';

/**
 * The webhook keeps one renderer from review to review (worldRenderer), so
 * that its templates are compiled once. Every review renders another small
 * world, and the checks render unions of them into temporary directories:
 * these specs hold each of those renders to what a renderer of its own
 * makes of the same world.
 */

const loaded = loadControllerConfig(readFileSync(defaultConfigPath(), 'utf8'));
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const config = loaded.config;
const ingresses = config.watchedResources.find((watched) => watched.name === 'ingresses')!;

function comparable(output: RenderOutput) {
  return { files: output.files, excluded: output.excluded, warnings: output.warnings };
}

describe('webhook small worlds', () => {
  it('renders each world through a kept renderer as a renderer of its own does, whatever was rendered before', () => {
    const kept = worldRenderer(config);
    let compared = 0;
    let withProblems = 0;
    for (const seed of [21, 22]) {
      const shape = { size: 24, namespaces: 3 };
      const stores = buildStores(config.watchedResources, initialWorld(shape), config.ignoreFields);
      const neighbourhood = new IngressNeighbourhood(config.ingress.className);
      let step = 0;
      let previous: World | undefined;
      for (const change of randomChanges(seed, 120, shape)) {
        const store = stores.get(change.resource)!;
        if (change.deleted) store.delete(change.object);
        else store.upsert(change.object);
        if (change.resource !== 'ingresses' || change.deleted) continue;
        neighbourhood.follow(store);
        const world = smallWorld(config, stores, ingresses, change.object, neighbourhood);
        // As the checks render them: unions of worlds, each into a directory of its own.
        const union = previous && unionOf([previous, world]);
        const rendered: [World, string | undefined][] = [[world, undefined], ...(union ? [[union, `/tmp/check-${++step}`] as [World, string]] : [])];
        for (const [each, baseDir] of rendered) {
          const output = kept(each, baseDir);
          expect(comparable(output), `${change.object.metadata.namespace}/${change.object.metadata.name} after ${step} renders`).to.deep.equal(
            comparable(renderWorld(config, each, baseDir)),
          );
          compared++;
          if (output.excluded.length + output.warnings.length > 0) withProblems++;
        }
        previous = world;
      }
    }
    // Worlds with exclusions and warnings must be among them, or the comparison proves little.
    expect(compared).to.be.greaterThan(100);
    expect(withProblems).to.be.greaterThan(10);
  });
});
