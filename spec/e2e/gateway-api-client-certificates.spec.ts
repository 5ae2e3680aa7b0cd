import { expect } from 'chai';
import { ask, EchoBackend, routed, type Answer, type Ask } from '../support/echo-backend.ts';
import { certificateAuthority, type Issued } from '../support/client-certificates.ts';
import { eventually } from '../support/eventually.ts';
import { LocalHarness } from '../support/local-harness.ts';
import { documents as docs, service, slice, tlsSecret } from '../support/manifest-builders.ts';
import { base64, LEAF_CERT, LEAF_KEY } from '../support/tls-fixture.ts';

/**
 * Gateway frontend client certificate validation (spec.tls.frontend,
 * standard since Gateway API v1.5) end to end in local mode: real client
 * certificates from CAs made for the run, over real TLS through a real
 * HAProxy, after the conformance scenarios
 * GatewayFrontendClientCertificateValidation, ...InsecureFallback and
 * GatewayFrontendInvalidDefaultClientCertificateValidation
 * (conformance/tests/gateway-with-clientcertificate-validation*.go): a
 * request that must fail fails in the handshake, as their client sees it.
 */

const CLASS = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: haproxy }
spec: { controllerName: haproxy-template-ic.io/gateway-controller }
`;

/** The Gateway: an HTTP listener and an HTTPS one for every name, with `frontend` as its spec.tls.frontend (YAML flow style). */
function gatewayWith(frontend: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: haproxy
  tls: { frontend: ${frontend} }
  listeners:
    - { name: http, port: 80, protocol: HTTP }
    - { name: https, port: 443, protocol: HTTPS, tls: { certificateRefs: [ { name: listener-tls } ] } }
`;
}

const validation = (ref: string, mode = 'AllowValidOnly') => `{ validation: { mode: ${mode}, caCertificateRefs: [ ${ref} ] } }`;

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: secure, namespace: default }
spec:
  parentRefs: [ { name: gw } ]
  hostnames: [ secure.example.org ]
  rules: [ { backendRefs: [ { name: echo, port: 80 } ] } ]
`;

function caConfigMap(name: string, ca: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name}, namespace: default }\ndata:\n  ca.crt: |\n${ca
    .trim()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n')}\n`;
}

function caSecret(name: string, ca: string): string {
  return `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: default }\ntype: Opaque\ndata: { ca.crt: ${base64(ca)} }\n`;
}

/** A request over TLS to the route, with a client certificate or none; a refused handshake is its error's message. */
function secure(harness: LocalHarness, client?: Issued, options: Ask = {}): Promise<Answer | string> {
  return ask(harness, 'secure.example.org', '/', { tls: true, ...(client ? { cert: client.cert, key: client.key } : {}), ...options }).catch((error: Error) => `refused: ${error.message}`);
}

const status = (answer: Answer | string) => (typeof answer === 'string' ? answer : answer.status);

/** Refused in the TLS handshake, not while HAProxy restarts. */
const refusedInHandshake = (answer: Answer | string) => typeof answer === 'string' && !answer.includes('ECONNREFUSED');

const HANDSHAKE_REFUSED = /^refused: (?!.*ECONNREFUSED)/;

describe('Gateway API frontend client certificate validation end to end', function () {
  this.timeout(60_000);
  let harness: LocalHarness;
  let echo: EchoBackend;
  let alice: Issued;
  let mallory: Issued;

  /** Writes the Gateway and waits until `ready` holds for a request with `client`. */
  async function serve(frontend: string, client: Issued | undefined, ready: (answer: Answer | string) => boolean, what: string): Promise<void> {
    const mark = harness.mark();
    await harness.write('gateway.yaml', gatewayWith(frontend));
    await harness.next(mark, 'deployed');
    await eventually(() => secure(harness, client), ready, what, 15_000);
    await harness.settled();
  }

  before(async () => {
    const trusted = certificateAuthority('Trusted Client CA');
    const other = certificateAuthority('Other CA');
    alice = trusted.issue('alice', 'Acme');
    mallory = other.issue('mallory', 'Evil');
    echo = await EchoBackend.start();
    harness = await LocalHarness.start({ manifests: {}, backends: 0 }, []);
    await harness.write(
      'objects.yaml',
      docs(
        CLASS,
        tlsSecret('listener-tls', LEAF_CERT, LEAF_KEY),
        service('echo', [{ port: 80, targetPort: echo.port }]),
        slice('echo-1', 'echo', undefined, echo.port),
        caConfigMap('client-ca', trusted.cert),
        caSecret('other-ca', other.cert),
        ROUTE,
      ),
    );
  });

  after(async () => {
    await harness?.stop();
    await echo?.stop();
  });

  it('serves a client whose certificate the CA of a ConfigMap signed, and refuses in the handshake one from another CA and one without a certificate (AllowValidOnly)', async () => {
    await serve(`{ default: ${validation('{ kind: ConfigMap, group: "", name: client-ca }')} }`, alice, (answer) => status(answer) === 200, 'alice to be served');
    expect(status(await secure(harness, alice))).to.equal(200);
    expect(status(await secure(harness, mallory))).to.match(HANDSHAKE_REFUSED);
    expect(status(await secure(harness))).to.match(HANDSHAKE_REFUSED);
    // The route is on the HTTP listener too, which validates nothing.
    expect((await ask(harness, 'secure.example.org', '/')).status).to.equal(200);
  });

  it("takes the port's own validation over the default: the other CA, from a Secret, in AllowInsecureFallback, serves every client", async () => {
    await serve(
      `{ default: ${validation('{ kind: ConfigMap, group: "", name: client-ca }')}, perPort: [ { port: 443, tls: ${validation('{ kind: Secret, group: "", name: other-ca }', 'AllowInsecureFallback')} } ] }`,
      undefined,
      (answer) => status(answer) === 200,
      'a client without a certificate to be served',
    );
    for (const client of [alice, mallory, undefined]) expect(status(await secure(harness, client)), client?.cert.slice(-40)).to.equal(200);
    // AllowValidOnly with the other CA for the port: mallory is served, alice refused.
    await serve(
      `{ default: ${validation('{ kind: ConfigMap, group: "", name: client-ca }')}, perPort: [ { port: 443, tls: ${validation('{ kind: Secret, group: "", name: other-ca }')} } ] }`,
      alice,
      refusedInHandshake,
      'alice to be refused',
    );
    expect(status(await secure(harness, mallory))).to.equal(200);
  });

  it('refuses a request through a bind that lets failed certificates by for an Ingress, or whose SNI named another host', async () => {
    await harness.write(
      'ingress.yaml',
      routed(
        'partner',
        'partner.example.com',
        { 'nginx.ingress.kubernetes.io/auth-tls-secret': 'default/other-ca', 'nginx.ingress.kubernetes.io/auth-tls-verify-client': 'optional_no_ca' },
        ['/'],
        'listener-tls',
      ),
    );
    await serve(`{ default: ${validation('{ kind: ConfigMap, group: "", name: client-ca }')} }`, alice, (answer) => status(answer) === 200, 'alice to be served');
    await eventually(
      () => ask(harness, 'partner.example.com', '/', { tls: true, cert: alice.cert, key: alice.key }),
      (answer) => answer.status === 200,
      "the Ingress's optional_no_ca host to take a certificate it cannot verify",
      15_000,
    );
    // The bind now lets mallory's certificate through the handshake; the route refuses it.
    const foreign = await secure(harness, mallory);
    expect(typeof foreign === 'string' ? foreign : [foreign.status, foreign.body]).to.deep.equal([400, 'The SSL certificate error']);
    expect(status(await secure(harness))).to.match(HANDSHAKE_REFUSED);
    // Through the Ingress host's line, which asked for no valid certificate: the route's host is refused (421).
    expect(status(await secure(harness, undefined, { servername: 'partner.example.com' }))).to.equal(421);
    expect(status(await secure(harness, alice))).to.equal(200);
    await harness.remove('ingress.yaml');
  });

  it('serves nothing over the HTTPS listener whose only CA reference does not resolve, and still serves HTTP (GatewayFrontendInvalidDefaultClientCertificateValidation)', async () => {
    // No certificate is left to serve: the HTTPS bind is gone, and the connection refused.
    await serve(`{ default: ${validation('{ kind: ConfigMap, group: "", name: does-not-exist }')} }`, alice, (answer) => typeof answer === 'string', 'the HTTPS listener to be refused');
    expect(status(await secure(harness))).to.match(/^refused: /);
    expect((await ask(harness, 'secure.example.org', '/')).status).to.equal(200);
  });
});
