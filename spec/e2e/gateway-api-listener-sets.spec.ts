import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { ask, EchoBackend, type Seen } from '../support/echo-backend.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { LEAF_CERT, LEAF_KEY, SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../support/tls-fixture.ts';

/**
 * ListenerSets end to end in local mode, with a real HAProxy: a Gateway
 * admitting the ListenerSets of the namespaces labelled for it, an
 * HTTPRoute of another namespace on a ListenerSet listener served over
 * real HTTP, one on a ListenerSet its Gateway does not admit not served,
 * and an HTTPS listener of a ListenerSet serving its own certificate (a
 * Secret of the ListenerSet's namespace) to curl.
 */

const run = promisify(execFile);

const GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: haproxy }
spec: { controllerName: haproxy-template-ic.io/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: haproxy
  allowedListeners: { namespaces: { from: Selector, selector: { matchLabels: { listeners: gw } } } }
  listeners:
    - { name: http, port: 80, protocol: HTTP, hostname: gw.example.com }
    - { name: https, port: 443, protocol: HTTPS, hostname: gw.example.com, tls: { certificateRefs: [ { name: gw-tls } ] } }
`;

function namespace(name: string, labels: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata: { name: ${name}, labels: ${labels} }\n`;
}

/** A ListenerSet of `ns` on Gateway default/gw: an HTTP listener for `host`, and an HTTPS one ending TLS with the Secret `ns`/team-tls. */
function listenerSet(ns: string, host: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: { name: team, namespace: ${ns} }
spec:
  parentRef: { name: gw, namespace: default }
  listeners:
    - { name: web, port: 80, protocol: HTTP, hostname: ${host} }
    - { name: secure, port: 443, protocol: HTTPS, hostname: ${host}, tls: { certificateRefs: [ { name: team-tls } ] } }
`;
}

/** An HTTPRoute of `ns` on its ListenerSet team, every request to the Service echo of `ns`. */
function route(ns: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: app, namespace: ${ns} }
spec:
  parentRefs: [ { group: gateway.networking.k8s.io, kind: ListenerSet, name: team } ]
  rules: [ { backendRefs: [ { name: echo, port: 80 } ] } ]
`;
}

describe('Gateway API ListenerSets end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;

  before(async () => {
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    const team = (ns: string) => [service('echo', [{ port: 80, targetPort: echo.port }], ns), slice('echo-1', 'echo', undefined, echo.port, true, { namespace: ns }), route(ns)];
    await harness.write(
      'listener-sets.yaml',
      docs(
        GATEWAY,
        tlsSecret('gw-tls', SELF_SIGNED_CERT, SELF_SIGNED_KEY),
        namespace('team-a', '{ listeners: gw }'),
        namespace('team-b', '{}'),
        listenerSet('team-a', 'shop.example.com'),
        tlsSecret('team-tls', LEAF_CERT, LEAF_KEY, 'team-a'),
        ...team('team-a'),
        listenerSet('team-b', 'refused.example.com'),
        tlsSecret('team-tls', LEAF_CERT, LEAF_KEY, 'team-b'),
        ...team('team-b'),
      ),
    );
    await eventually(
      () => ask(harness, 'shop.example.com', '/'),
      (answer) => answer.status === 200,
      'the route on the ListenerSet to be served',
      15_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${harness.lines.slice(-30).join('\n')}`);
    });
    await harness.settled();
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  it("serves an HTTPRoute of another namespace on the ListenerSet listener its Gateway admits, for the listener's hostname alone", async () => {
    const answer = await ask(harness, 'shop.example.com', '/cart');
    expect(answer.status, answer.body).to.equal(200);
    expect((JSON.parse(answer.body) as Seen).url).to.equal('/cart');
    // The route names the ListenerSet, not the Gateway: the Gateway's own listener does not serve it.
    expect((await ask(harness, 'gw.example.com', '/cart')).status).to.equal(404);
  });

  it('serves nothing of a ListenerSet whose namespace the Gateway does not admit (allowedListeners)', async () => {
    expect((await ask(harness, 'refused.example.com', '/cart')).status).to.equal(404);
  });

  it("serves the certificate of the ListenerSet's HTTPS listener, from its own namespace, and the route over it (curl --resolve)", async () => {
    const port = harness.ports.https;
    const { stdout, stderr } = await run('curl', ['-sv', '-k', '--max-time', '5', '--resolve', `shop.example.com:${port}:127.0.0.1`, `https://shop.example.com:${port}/over-tls`]);
    expect((JSON.parse(stdout) as Seen).url).to.equal('/over-tls');
    expect(/subject: (.*)/.exec(stderr)?.[1]).to.include(new X509Certificate(LEAF_CERT).subject.split('\n').at(-1));
    expect(await harness.handshake('shop.example.com')).to.equal(new X509Certificate(LEAF_CERT).fingerprint256);
    expect(await harness.handshake('gw.example.com')).to.equal(new X509Certificate(SELF_SIGNED_CERT).fingerprint256);
  });
});
