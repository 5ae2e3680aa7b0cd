/**
 * The Data Plane API target under the convergence algorithm, against the
 * emulator with the real API's behaviours (written-back configuration, path
 * patterns, certificates described and written to storage only) in front of
 * a real HAProxy (2.6 to 3.4, HAPROXY_BIN; the release paired with it unless
 * a case names one): the shared deploy target contract and the cases of an
 * API in front of HAProxy (dataplane-world.ts, which a real dataplaneapi runs
 * too: spec/real-peers/), then what only the emulator can show (another
 * writer on cue, releases without runtime certificate endpoints, an instance
 * restarted empty, injected faults). Reloads are counted on HAProxy's
 * master, requests at the emulator.
 */
import { expect } from 'chai';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../support/dataplane-emulator/index.ts';
import { servedSerial, serialOf } from '../../support/tls-handshake.ts';
import { LEAF_CERT } from '../../support/tls-fixture.ts';
import { httpGet } from '../../support/traffic.ts';
import { dataplaneCases, dataplaneWorld, describeDataplaneApiCases, removesWildcardHost } from './dataplane-world.ts';
import { describeTargetContract, SECOND_CERTIFICATE } from './target-contract.ts';

describeTargetContract('a HAProxy behind the Data Plane API paired with it (3.2 on HAProxy 3.2, the chart’s)', async () => dataplaneWorld(await startEmulator()));

describeDataplaneApiCases('the emulator (paired with HAProxy)', () => startEmulator());

describe('Data Plane API target: what only the emulator shows', function () {
  this.timeout(30_000);
  let options: EmulatorOptions = {};
  const { begin: beginWith, current } = dataplaneCases<Emulator>(() => startEmulator(options));
  const begin = (next: EmulatorOptions = {}) => {
    options = next;
    return beginWith();
  };

  it('reads and plans again after another writer moved the version, losing neither change', async () => {
    await begin();
    const { world, backends, shape, deploy, served } = current();
    await world.peer.bumpVersion();
    const result = await deploy({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } });
    expect(result.mode).to.equal('runtime');
    await served('shop.example.com', [backends[0]!, backends[2]!]);
    // The configuration the other writer left was read before writing on top of it: no version conflict at all.
    expect(world.peer.requests.matching('GET', '/v3/services/haproxy/configuration/raw').length).to.equal(2);
  });

  it('retries a write that loses a race with another writer, replaying its runtime work safely', async () => {
    await begin();
    const { world, controller, backends, shape, deploy, served } = current();
    const original = controller.client.postRawConfiguration.bind(controller.client);
    let bumped = false;
    controller.client.postRawConfiguration = async (...args) => {
      if (!bumped) {
        bumped = true;
        await world.peer.bumpVersion();
      }
      return original(...args);
    };
    const result = await deploy({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } });
    expect(result.mode).to.equal('runtime');
    expect(world.peer.requests.matching('POST', '/v3/services/haproxy/configuration/raw').length).to.equal(3);
    await served('shop.example.com', [backends[0]!, backends[2]!]);
  });

  it('3.4: removes a wildcard host, whose keys no runtime path can carry, with the map replaced and one reload, saying why', async () => {
    await begin({ release: '3.4' });
    await removesWildcardHost(current());
  });

  it('3.1 has no runtime certificate endpoints: a rotation reloads, and the new certificate is served', async () => {
    await begin({ release: '3.1' });
    const { ports, shape, deploy } = current();
    const result = await deploy({ ...shape, certificate: SECOND_CERTIFICATE });
    expect(result.mode).to.equal('reload');
    expect(result.reloadReason).to.match(/^runtime update failed: the Data Plane API has no runtime certificate endpoints \(they came in 3\.2\)/);
    expect(await servedSerial('127.0.0.1', ports.https, 'shop.example.com')).to.equal(serialOf(LEAF_CERT));
  });

  it('gives an instance restarted empty the full configuration', async () => {
    await begin();
    const { world, controller, ports, backends, shape, files, served } = current();
    await world.peer.restartEmpty();
    expect(await httpGet('127.0.0.1', ports.http, 'shop.example.com')).to.not.match(/^200/);
    expect((await controller.deploy(files(shape), 'again', 'change')).mode).to.equal('reload');
    await served('shop.example.com', [backends[0]!]);
  });

  it('reports a failing endpoint with its error and recovers on the next deploy', async () => {
    await begin();
    const { world, controller, backends, shape, deploy } = current();
    world.peer.faults.failNext(1, 500);
    const error = await deploy({ ...shape, backends: { ...shape.backends, web: backends } }).catch((failure: unknown) => failure);
    expect(String(error)).to.match(/500/);
    expect(controller.status).to.include({ consecutiveFailures: 1 });
    expect((await deploy({ ...shape, backends: { ...shape.backends, web: backends } })).mode).to.equal('runtime');
    expect(controller.status).to.include({ consecutiveFailures: 0 });
  });
});
