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
import { DataplaneClient } from '../../../lib/dataplane/client.ts';
import { responseError } from '../../../lib/dataplane/errors.ts';
import { Converger } from '../../../lib/deploy/converge.ts';
import { DataplaneTarget } from '../../../lib/deploy/dataplane-target.ts';
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

  it('stores a configuration not yet confirmed with its runtime operations, which ride on that write: its confirmation finds nothing left', async () => {
    await begin();
    const { world, controller, backends, shape, files, served } = current();
    const posts = () => world.peer.requests.matching('POST', '/v3/services/haproxy/configuration/raw').length;
    const before = posts();
    const moved = files({ ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } });
    expect((await controller.deploy(moved, 'pending', 'change', false)).mode).to.equal('runtime');
    await served('shop.example.com', [backends[0]!, backends[2]!]);
    expect(posts()).to.equal(before + 1);
    expect(await controller.deploy(moved, 'pending', 'confirmed')).to.deep.equal({ mode: 'unchanged', operations: 0 });
    expect(posts()).to.equal(before + 1);
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

  it('asks again while HAProxy will not delete a server that still has connections, and past the tries leaves it in maintenance, saying so', async () => {
    await begin();
    const { world, backends, shape, files, served } = current();
    const logged: string[] = [];
    const client = new DataplaneClient({ url: world.peer.url, username: world.peer.credentials.user, password: world.peer.credentials.password });
    const controller = new Converger({ target: new DataplaneTarget({ client, reloadPollMs: 25, log: (line) => logged.push(line) }) });
    const both = { ...shape, backends: { ...shape.backends, web: [backends[0]!, backends[2]!] } };
    expect((await controller.deploy(files(both), 'both', 'change')).mode).to.equal('runtime');

    // What DPAPI does while HAProxy still counts a connection (handlers/runtime/servers/servers.go
    // DeleteRuntimeServer, src/server.c srv_check_for_deletion): maintenance first, then a 500.
    let refusals = 2;
    const asked: string[] = [];
    const deleteServer = client.deleteRuntimeServer.bind(client);
    client.deleteRuntimeServer = async (backend, name) => {
      asked.push(`${backend}/${name}`);
      if (refusals-- <= 0) return deleteServer(backend, name);
      await client.updateRuntimeServer(backend, name, { admin_state: 'maint' });
      throw responseError({
        endpoint: client.endpoint,
        method: 'DELETE',
        path: `/services/haproxy/runtime/backends/${backend}/servers/${name}`,
        target: `/services/haproxy/runtime/backends/${backend}/servers/${name}`,
        status: 500,
        statusText: 'Internal Server Error',
        body: JSON.stringify({ code: 500, message: `${world.statsSocket} [3] Server still has connections attached to it, cannot remove it. [del server ${backend}/${name}]` }),
        reloadId: undefined,
        version: undefined,
      });
    };
    expect((await controller.deploy(files(shape), 'one', 'change')).mode).to.equal('runtime');
    expect(asked).to.deep.equal([`web/s${backends[2]}`, `web/s${backends[2]}`, `web/s${backends[2]}`]);
    expect((await client.runtimeServers('web')).map((server) => server.name)).to.deep.equal([`s${backends[0]}`]);
    expect(logged).to.deep.equal([]);

    // Refused every time: the deployment stands, the server takes no traffic and the log says why.
    expect((await controller.deploy(files(both), 'both-again', 'change')).mode).to.equal('runtime');
    refusals = Infinity;
    asked.length = 0;
    expect((await controller.deploy(files(shape), 'one-again', 'change')).mode).to.equal('runtime');
    expect(asked).to.have.length(10);
    expect(logged).to.have.length(1);
    expect(logged[0]).to.match(new RegExp(`runtime server web/s${backends[2]} left in maintenance, not deleted: .*still has connections`));
    expect((await client.runtimeServer('web', `s${backends[2]}`)).admin_state).to.equal('maint');
    await served('shop.example.com', [backends[0]!]);
    client.close();
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
