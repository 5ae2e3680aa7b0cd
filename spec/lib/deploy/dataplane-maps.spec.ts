import { expect } from 'chai';
import { mapRefusal } from '../../../lib/deploy/dataplane-maps.ts';
import type { MapEntry, RuntimeOperation } from '../../../lib/haproxy/plan-types.ts';

type MapUpdate = Extract<RuntimeOperation, { type: 'updateMap' }>;

/** An update of host.map named by its path under the API's maps directory, from `before` to `entries`. */
function update(before: readonly MapEntry[], entries: readonly MapEntry[], overrides: Partial<MapUpdate> = {}): MapUpdate {
  const old = new Map(before);
  const next = new Map(entries);
  return {
    type: 'updateMap',
    map: 'host.map',
    entries,
    before,
    added: [...next].filter(([key]) => !old.has(key)),
    changed: [...next].filter(([key, value]) => old.has(key) && old.get(key) !== value),
    removed: [...old.keys()].filter((key) => !next.has(key)),
    references: ['/etc/haproxy/maps/host.map'],
    ordered: false,
    ...overrides,
  };
}

const maps = '/etc/haproxy/maps';

describe('mapRefusal (Data Plane API runtime maps, docs/dataplane-api-contract.md §6a)', () => {
  it('lets entry calls through: additions of any key, changes and deletions of keys a path can carry', () => {
    const before: MapEntry[] = [
      ['a.example.com', 'a'],
      ['b.example.com', 'b'],
    ];
    expect(
      mapRefusal(
        update(before, [
          ['a.example.com', 'a2'],
          ['*.c.example.com', 'c'],
        ]),
        maps,
      ),
    ).to.equal(undefined);
  });

  it('refuses a map the configuration names by another path than <maps_dir>/<name>', () => {
    expect(mapRefusal(update([['a', '1']], [['a', '2']], { references: ['maps/host.map'] }), maps)).to.equal(
      'map host.map is named maps/host.map in the configuration; the Data Plane API reaches a runtime map only as /etc/haproxy/maps/host.map',
    );
    expect(mapRefusal(update([['a', '1']], [['a', '2']]), undefined)).to.match(/only as <maps_dir>\/<name>$/);
  });

  it('refuses changing or deleting a key the runtime map paths refuse, naming it', () => {
    for (const key of ['*.example.com', '*/blog/', 'a#b', 'a$b', 'a&b', 'a{b}', 'a<b>', 'a"b']) {
      expect(mapRefusal(update([[key, '1']], []), maps), key).to.equal(
        `map host.map: the key ${key} cannot be changed or deleted through the Data Plane API (its runtime map paths refuse * # $ & ; < > { } ")`,
      );
      expect(mapRefusal(update([[key, '1']], [[key, '2']]), maps), key).to.match(/cannot be changed or deleted/);
    }
  });

  it('refuses what entry calls cannot express: duplicate keys, values of more than one word, a ;', () => {
    expect(
      mapRefusal(
        update(
          [['a', '1']],
          [
            ['a', '1'],
            ['a', '2'],
          ],
        ),
        maps,
      ),
    ).to.equal('map host.map has the key a more than once, which entry updates cannot express');
    expect(mapRefusal(update([], [['a', 'two words']]), maps)).to.equal('map host.map: the entry "a two words" cannot be sent as one runtime map entry');
    expect(mapRefusal(update([], [['a;b', 'x']]), maps)).to.match(/cannot be sent as one runtime map entry/);
  });

  it('refuses, for a map looked up in file order, additions that do not all go last', () => {
    const before: MapEntry[] = [['/a', 'x']];
    expect(
      mapRefusal(
        update(
          before,
          [
            ['/a', 'x'],
            ['/b', 'y'],
          ],
          { ordered: true },
        ),
        maps,
      ),
    ).to.equal(undefined);
    expect(
      mapRefusal(
        update(
          before,
          [
            ['/b', 'y'],
            ['/a', 'x'],
          ],
          { ordered: true },
        ),
        maps,
      ),
    ).to.equal('map host.map: its lookups take the first match in file order and new entries do not all go last, where the runtime API adds them');
    // Where lookups do not depend on order, the same change goes through.
    expect(
      mapRefusal(
        update(before, [
          ['/b', 'y'],
          ['/a', 'x'],
        ]),
        maps,
      ),
    ).to.equal(undefined);
  });
});
