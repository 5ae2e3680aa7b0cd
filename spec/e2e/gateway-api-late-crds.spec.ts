import { expect } from 'chai';
import { firstValueFrom, filter } from 'rxjs';
import { systemClock } from '../../lib/clock.ts';
import { startClusterMode, type ClusterMode } from '../../streams/cluster-mode.ts';
import { haproxyPodWithShippedConfig, replicaOptions } from '../support/cluster-fixtures.ts';
import type { Emulator } from '../support/dataplane-emulator/index.ts';
import { eventually } from '../support/eventually.ts';
import { GATEWAY_API_TYPES } from '../support/fake-apiserver/gateway-api-types.ts';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver/index.ts';
import { gateway, gatewayClass, httpListener } from '../lib/gateway/fixtures.ts';

/**
 * The controller in cluster mode started before the Gateway API CRDs were
 * installed, as happens when a cluster's operator installs them after the
 * chart: discovery says the kinds are not served, the controller runs on
 * without them, and once the CRDs exist a later discovery finds them and the
 * controller watches and answers for them, without a restart.
 */

const NAMESPACE = 'haproxy';
const POD_ADDRESS = '127.0.0.9';
const V1 = 'gateway.networking.k8s.io/v1';
const WRITTEN_AT = Date.parse('2030-01-02T03:04:05Z');

describe('Gateway API CRDs installed after the controller started', function () {
  this.timeout(60_000);
  let fake: FakeApiServer;
  let emulator: Emulator;
  let mode: ClusterMode;
  const logged: string[] = [];

  before(async () => {
    fake = await startFakeApiServer({ timeScale: 60 });
    emulator = await haproxyPodWithShippedConfig(fake, NAMESPACE, POD_ADDRESS);
    fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'infra' } });
    mode = await startClusterMode(
      replicaOptions(
        fake,
        NAMESPACE,
        'controller-a',
        { leaseMs: 3_000 },
        {
          lease: undefined,
          rediscoverEveryMs: 300,
          // The controller's wall clock, injected: its status conditions carry this time.
          clock: { ...systemClock, now: () => WRITTEN_AT },
          output: { out: (line) => void logged.push(line), err: (line) => void logged.push(line) },
        },
      ),
    );
    await firstValueFrom(mode.outcomes.pipe(filter((outcome) => outcome.type === 'deployed')));
  });

  after(async () => {
    await mode?.stop();
    await emulator?.stop();
    await fake?.close();
  });

  it('deploys without the kinds, then watches them once their CRDs exist and accepts its GatewayClass', async () => {
    expect(logged.join('')).to.match(/watchedResources\.gatewayclasses: the API server does not serve gateway\.networking\.k8s\.io\/v1 gatewayclasses/);
    for (const definition of GATEWAY_API_TYPES) fake.registerCustomResource(definition);
    fake.create(gatewayClass());
    fake.create(gateway('gw', [httpListener('http', { hostname: '*.example.com' })]));
    const accepted = await eventually(
      async () =>
        (
          (fake.get({ apiVersion: V1, kind: 'GatewayClass', name: 'haproxy' })?.['status'] as { conditions?: { type: string; status: string; lastTransitionTime: string }[] } | undefined)
            ?.conditions ?? []
        ).map((c) => `${c.type}=${c.status} at ${c.lastTransitionTime}`),
      (conditions) => conditions.length > 0,
      'the GatewayClass accepted',
    );
    expect(accepted).to.deep.equal(['Accepted=True at 2030-01-02T03:04:05Z']);
    expect(logged.join('')).to.match(/watchedResources\.gatewayclasses: the API server serves gateway\.networking\.k8s\.io\/v1 gatewayclasses now; watching it/);
  });
});
