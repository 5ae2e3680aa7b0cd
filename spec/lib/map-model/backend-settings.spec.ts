import { expect } from 'chai';
import type { BackendSettings } from '../../../lib/routing/settings.ts';
import { RouteAggregate, type ReadClaims } from '../../../lib/map-model/aggregate.ts';
import { BackendSettingsTable, differingSettings, NO_BACKEND_SETTINGS, settleBackendSettings } from '../../../lib/map-model/backend-settings.ts';
import { translateIngress } from '../../../lib/ingress/translate-ingress.ts';
import { claimsOf } from '../../../lib/map-model/claims.ts';
import { placeOf } from '../../../lib/routing/order.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { ingress, path, rule } from '../ingress/fixtures.ts';

/**
 * Backend settings when several Ingresses route to one backend: the oldest
 * Ingress asking for settings sets them, the others asking for different
 * ones are warned, and an Ingress asking for none has no say. The aggregate
 * keeps this in line as Ingresses come, go and change, without reading the
 * others again.
 */

const SLOW: BackendSettings = Object.freeze({ timeouts: Object.freeze({ server: 60_000 }) });
const LEASTCONN: BackendSettings = Object.freeze({ balance: Object.freeze({ algorithm: 'leastconn' as const }) });

/** An Ingress created on `day` of January 2024 routing `host/` to web:80. */
const routing = (name: string, day: number, host = `${name}.example.com`, service = 'web'): KubeObject =>
  ingress(name, { created: `2024-01-${String(day).padStart(2, '0')}T00:00:00Z`, rules: [rule(host, path('/', service, 80))] });

/** Reads Ingresses as the controller does, with the backend settings the test gives each (the annotation parsers are specified elsewhere). */
function readerWith(settings: ReadonlyMap<KubeObject, BackendSettings>): ReadClaims {
  return (object) => {
    const read = claimsOf(translateIngress(object)).read;
    const asked = settings.get(object);
    if (asked === undefined || read.served === undefined) return read;
    return { ...read, served: { ...read.served, settings: { ...read.served.settings, backend: asked } } };
  };
}

const noService = () => undefined;

/** The aggregate with the settings table the backends read, settled as a build settles them: the backends whose users moved. */
class Settled {
  readonly aggregate = new RouteAggregate();
  readonly #table = new BackendSettingsTable();

  settle(): string[] {
    const { backends } = this.aggregate.settle();
    for (const name of backends) this.#table.settle(name, this.aggregate.referrers(name).asks());
    return [...backends];
  }

  settings(name: string): BackendSettings {
    return this.#table.get(name);
  }

  get warnings() {
    return [...this.#table.warnings()].flat();
  }
}

describe('backend settings shared by several Ingresses', () => {
  describe('settleBackendSettings', () => {
    const user = (name: string, day: number, settings: BackendSettings) => ({ label: `Ingress default/${name}`, place: placeOf(routing(name, day)), settings });

    it('takes the oldest asking Ingress’s settings and warns each other asking Ingress that differs, naming the backend, the winner and the settings', () => {
      const settled = settleBackendSettings('default_web_80', [user('new', 3, LEASTCONN), user('old', 1, SLOW), user('same', 2, SLOW)], undefined);
      expect(settled.settings).to.equal(SLOW);
      expect(settled.warnings).to.deep.equal([
        {
          object: 'Ingress default/new',
          field: 'metadata.annotations',
          message: 'backend default_web_80 is served with the settings of older Ingress default/old, which differ from these in balance, timeouts.server',
        },
      ]);
    });

    it('gives an Ingress asking for no settings no say: a newer one asking for some wins', () => {
      const settled = settleBackendSettings('default_web_80', [user('old', 1, NO_BACKEND_SETTINGS), user('new', 2, SLOW)], undefined);
      expect(settled.settings).to.equal(SLOW);
      expect(settled.warnings).to.deep.equal([]);
    });

    it('returns the last settlement as it was while the same settings win, and the winner’s new object once it is read again', () => {
      const last = settleBackendSettings('default_web_80', [user('old', 1, SLOW), user('new', 2, LEASTCONN)], undefined);
      expect(settleBackendSettings('default_web_80', [user('new', 2, LEASTCONN), user('old', 1, SLOW)], last)).to.equal(last);
      // A re-read Ingress asking the same: its own object, which names it as read now.
      const reread = { timeouts: { server: 60_000 } };
      const again = settleBackendSettings('default_web_80', [user('old', 1, reread), user('new', 2, LEASTCONN)], last);
      expect(again.settings).to.equal(reread);
      expect(again.warnings).to.deep.equal(last.warnings);
    });

    it('names the parts of timeouts and health checks that differ, and the other settings whole', () => {
      expect(
        differingSettings(
          { timeouts: { server: 1000, connect: 5 }, healthCheck: { path: '/a' }, protocol: { version: 'h2', tls: true } },
          { timeouts: { server: 1000, tunnel: 7 }, healthCheck: { path: '/b', interval: 100 }, protocol: { version: 'h2', tls: false } },
        ),
      ).to.deep.equal(['healthCheck.interval', 'healthCheck.path', 'protocol', 'timeouts.connect', 'timeouts.tunnel']);
    });
  });

  describe('among the users the aggregate keeps', () => {
    it('serves a shared backend with the oldest asking Ingress’s settings, whichever order they arrive in', () => {
      const old = routing('old', 1);
      const young = routing('young', 2);
      const settings = new Map([
        [old, SLOW],
        [young, LEASTCONN],
      ]);
      for (const list of [
        [old, young],
        [young, old],
      ]) {
        const settled = new Settled();
        settled.aggregate.sync(list, readerWith(settings), noService);
        settled.settle();
        expect(settled.settings('default_web_80')).to.equal(SLOW);
        expect(settled.warnings.map((problem) => [problem.object, problem.message])).to.deep.equal([
          ['Ingress default/young', 'backend default_web_80 is served with the settings of older Ingress default/old, which differ from these in balance, timeouts.server'],
        ]);
      }
    });

    it('follows the winner as Ingresses go and change: the next oldest takes over, and the warning goes with the conflict', () => {
      const old = routing('old', 1);
      const young = routing('young', 2);
      const settings = new Map([
        [old, SLOW],
        [young, LEASTCONN],
      ]);
      const settled = new Settled();
      const { aggregate } = settled;
      const read = readerWith(settings);
      aggregate.sync([old, young], read, noService);
      settled.settle();

      // The oldest is deleted: the younger's settings are served, and nobody is warned.
      aggregate.update([old], () => undefined, read, noService);
      expect(settled.settle()).to.deep.equal(['default_web_80']);
      expect(settled.settings('default_web_80')).to.equal(LEASTCONN);
      expect(settled.warnings).to.deep.equal([]);

      // It comes back asking for what the younger asks: it wins, and still nobody is warned.
      const back = routing('old', 1);
      const same = { balance: { algorithm: 'leastconn' as const } };
      settings.set(back, same);
      aggregate.update([back], (object) => (object.metadata.name === 'old' ? back : young), read, noService);
      settled.settle();
      expect(settled.settings('default_web_80')).to.equal(same);
      expect(settled.warnings).to.deep.equal([]);

      // It changes its settings: it wins again, and the younger is warned.
      const changed = { ...back, metadata: { ...back.metadata, resourceVersion: '2' } };
      settings.set(changed, SLOW);
      aggregate.update([back], (object) => (object.metadata.name === 'old' ? changed : young), read, noService);
      settled.settle();
      expect(settled.settings('default_web_80')).to.equal(SLOW);
      expect(settled.warnings.map((problem) => problem.object)).to.deep.equal(['Ingress default/young']);

      // It drops its settings: the younger's are served again.
      const plain = { ...changed, metadata: { ...changed.metadata, resourceVersion: '3' } };
      aggregate.update([changed], (object) => (object.metadata.name === 'old' ? plain : young), read, noService);
      settled.settle();
      expect(settled.settings('default_web_80')).to.equal(LEASTCONN);
      expect(settled.warnings).to.deep.equal([]);
    });

    it('counts only the Ingresses a backend serves: a route lost to an older Ingress gives no say over its backend', () => {
      const owner = routing('owner', 1, 'shared.example.com', 'web');
      const loser = routing('loser', 2, 'shared.example.com', 'web');
      const elsewhere = routing('elsewhere', 3, 'other.example.com', 'web');
      const settings = new Map([
        [loser, SLOW],
        [elsewhere, LEASTCONN],
      ]);
      const settled = new Settled();
      settled.aggregate.sync([owner, loser, elsewhere], readerWith(settings), noService);
      settled.settle();
      // The loser routes to the same backend but serves nothing: the backend takes the settings of the one it serves.
      expect(settled.settings('default_web_80')).to.equal(LEASTCONN);
      expect(settled.warnings).to.deep.equal([]);
    });

    it('counts the Ingress whose default backend is served', () => {
      const fallback = ingress('fallback', { created: '2024-01-01T00:00:00Z', defaultBackend: { service: { name: 'web', port: { number: 80 } } } });
      const young = routing('young', 2);
      const settings = new Map([
        [fallback, SLOW],
        [young, LEASTCONN],
      ]);
      const settled = new Settled();
      settled.aggregate.sync([young, fallback], readerWith(settings), noService);
      settled.settle();
      expect(settled.settings('default_web_80')).to.equal(SLOW);
      expect(settled.warnings.map((problem) => problem.object)).to.deep.equal(['Ingress default/young']);
    });
  });
});
