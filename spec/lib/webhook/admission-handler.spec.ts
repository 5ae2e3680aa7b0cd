import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { defaultConfigPath } from '../../../lib/cli/package-root.ts';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { ControllerConfig } from '../../../lib/config/types.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';
import { AdmissionHandler, type AdmissionState } from '../../../lib/webhook/admission-handler.ts';
import { LEAF_CERT, LEAF_KEY, UNRELATED_KEY } from '../../support/tls-fixture.ts';
import { endpointSlice, ingress, path, rule, service, tlsSecret } from '../ingress/fixtures.ts';

/**
 * AdmissionReviews as the API server sends them, answered over the shipped
 * configuration with the real `haproxy -c`: what is judged and what is left
 * alone, denials and warnings as kubectl shows them, and the errors that
 * leave the decision to the webhook's failurePolicy.
 */

function configFrom(text: string): ControllerConfig {
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  return loaded.config;
}

const shipped = configFrom(readFileSync(defaultConfigPath(), 'utf8'));
const web = service('web', [{ name: 'http', port: 80, targetPort: 8080 }], 'shop');
const webSlice = endpointSlice('web-1', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'], ready: true }], { namespace: 'shop' });
const shop = (fields: Parameters<typeof ingress>[1] = {}) => ingress('shop', { namespace: 'shop', rules: [rule('shop.example.com', path('/', 'web', 'http'))], ...fields });

const resources = {
  ingresses: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
  secrets: { group: '', version: 'v1', resource: 'secrets' },
  services: { group: '', version: 'v1', resource: 'services' },
};

let uids = 0;
function review(resource: keyof typeof resources, object: KubeObject | undefined, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${++uids}`,
      resource: resources[resource],
      kind: { group: resources[resource].group, version: 'v1', kind: String(object?.kind ?? '') },
      namespace: object?.metadata.namespace ?? 'shop',
      name: object?.metadata.name ?? '',
      operation: 'CREATE',
      object: object ?? null,
      oldObject: null,
      dryRun: false,
      ...extra,
    },
  };
}

function handlerOver(config: ControllerConfig, objects: Record<string, readonly KubeObject[]> = { services: [web], endpointslices: [webSlice] }) {
  const state: AdmissionState = { config, stores: buildStores(config.watchedResources, new Map(Object.entries(objects)), config.ignoreFields) };
  return new AdmissionHandler({ state: () => state, checkConcurrency: 1 });
}

const soon = () => Date.now() + 10_000;
const response = (body: unknown) => (body as { response: { uid: string; allowed: boolean; status?: { message: string }; warnings?: string[] } }).response;

describe('AdmissionHandler', () => {
  it('admits a good Ingress of the class after haproxy -c accepted the configuration made for it, and answers a repeat from the kept verdict', async () => {
    const handler = handlerOver(shipped);
    const body = review('ingresses', shop());
    const reply = await handler.review(body, soon());
    expect(reply.status).to.equal(200);
    expect(response(reply.body)).to.deep.equal({ uid: body.request.uid, allowed: true });
    expect(reply.record).to.deep.include({ resource: 'ingresses', operation: 'CREATE', namespace: 'shop', name: 'shop', result: 'allowed', check: 'ran' });
    expect((await handler.review(review('ingresses', shop()), soon())).record.check).to.equal('cached');
  });

  it('denies a bad Ingress with every field at fault in the message kubectl prints', async () => {
    const reply = await handlerOver(shipped).review(
      review('ingresses', shop({ rules: [rule('bad host', path('/', 'web', 'http')), rule('shop.example.com', path('api', 'web', 'http'))] })),
      soon(),
    );
    const answer = response(reply.body);
    expect(answer.allowed).to.equal(false);
    expect(answer.status!.message.split('\n').map((line) => line.split(':')[0])).to.deep.equal(['spec.rules[0].host', 'spec.rules[1].http.paths[0].path']);
    expect(reply.record).to.deep.include({ result: 'denied', check: 'none', reason: answer.status!.message });
  });

  it('judges UPDATEs as CREATEs: the proposed object in place of the stored one', async () => {
    const stored = shop();
    const handler = handlerOver(shipped, { services: [web], endpointslices: [webSlice], ingresses: [stored] });
    const reply = await handler.review(review('ingresses', shop({ rules: [rule('shop.example.com', path('/', 'Web', 'http'))] }), { operation: 'UPDATE', oldObject: stored }), soon());
    expect(response(reply.body).status!.message).to.equal('spec.rules[0].http.paths[0].backend.service.name: "Web" is not a Service name');
  });

  it('admits with warnings what will be served otherwise than it asks', async () => {
    const reply = await handlerOver(shipped, {}).review(review('ingresses', shop()), soon());
    const answer = response(reply.body);
    expect(answer.allowed).to.equal(true);
    expect(answer.warnings).to.have.length(1);
    expect(answer.warnings![0]).to.match(/^spec\.rules\[0\]\.http\.paths\[0\]: /);
  });

  it("denies a TLS Secret an Ingress of the class uses when its key is not the certificate's", async () => {
    const user = shop({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] });
    const handler = handlerOver(shipped, { services: [web], endpointslices: [webSlice], ingresses: [user] });
    expect(response((await handler.review(review('secrets', tlsSecret('shop-tls', LEAF_CERT, LEAF_KEY, 'shop')), soon())).body).allowed).to.equal(true);
    const bad = await handler.review(review('secrets', tlsSecret('shop-tls', LEAF_CERT, UNRELATED_KEY, 'shop')), soon());
    expect(response(bad.body).status!.message).to.match(/^data\[tls\.key\]: /);
  });

  it('denies what haproxy -c refuses in the configuration made for it, naming the line and the object', async () => {
    const config = configFrom(`
watchedResources:
  services: { apiVersion: v1, kind: Service, validationWebhook: true }
templates:
  haproxyConfig: |
    global
    defaults
      mode http
      timeout connect 5s
      timeout client 5s
      timeout server 5s
    {{#resources.services}}
    backend {{metadata.name}}
      server s1 {{spec.clusterIP}}:80
    {{/resources.services}}
`);
    const handler = handlerOver(config, {});
    const good = { ...web, spec: { clusterIP: '10.0.0.10' } };
    expect(response((await handler.review(review('services', good), soon())).body).allowed).to.equal(true);
    const reply = await handler.review(review('services', { ...web, spec: { clusterIP: 'nowhere.invalid' } }), soon());
    const message = response(reply.body).status!.message;
    expect(message).to.match(/^haproxy -c refuses the configuration made for it: haproxy\.cfg:\d+: /);
    expect(message).to.include('values of Service shop/web');
    expect(reply.record).to.deep.include({ result: 'denied', check: 'ran' });
  });

  describe('leaves alone, allowed', () => {
    const skipped: [string, keyof typeof resources, KubeObject, Record<string, unknown>, string][] = [
      [
        'an Ingress of another class (ingress-nginx #7546)',
        'ingresses',
        shop({ className: 'nginx', rules: [rule('bad host', path('/', 'web', 'http'))] }),
        {},
        'not judged: not of class haproxy',
      ],
      [
        'a Secret outside the watched selector (not kubernetes.io/tls)',
        'secrets',
        { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { namespace: 'shop', name: 'other' }, data: { 'tls.crt': '!' } },
        {},
        'not judged: outside watchedResources.secrets',
      ],
      ['a resource the configuration does not mark', 'services', web, {}, 'not judged: the configuration does not mark services for the webhook'],
      ['a status update', 'ingresses', shop({ rules: [rule('bad host', path('/', 'web', 'http'))] }), { operation: 'UPDATE', subResource: 'status' }, 'not judged: UPDATE of status'],
      ['a deletion', 'ingresses', shop(), { operation: 'DELETE', object: null, oldObject: shop() }, 'not judged: DELETE'],
    ];
    for (const [what, resource, object, extra, reason] of skipped) {
      it(what, async () => {
        const reply = await handlerOver(shipped).review(review(resource, object, extra), soon());
        expect(response(reply.body)).to.deep.include({ allowed: true });
        expect(reply.record).to.deep.include({ result: 'skipped', reason });
      });
    }
  });

  describe('answers an error, so the failurePolicy decides,', () => {
    it('before the controller has its configuration and stores', async () => {
      const reply = await new AdmissionHandler({ state: () => undefined }).review(review('ingresses', shop()), soon());
      expect(reply.status).to.equal(503);
      expect(reply.body).to.deep.include({ kind: 'Status', code: 503, message: 'not ready: the controller has not read its configuration and resources yet' });
    });

    it('when haproxy -c has not judged before the API server stops waiting', async () => {
      const reply = await handlerOver(shipped).review(review('ingresses', shop({ rules: [rule('late.example.com', path('/', 'web', 'http'))] })), Date.now());
      expect(reply.status).to.equal(503);
      expect(reply.record).to.deep.include({ result: 'error', reason: 'haproxy -c could not judge it: it did not finish before the API server stops waiting' });
    });

    it('for a body that is no AdmissionReview', async () => {
      const reply = await handlerOver(shipped).review({ kind: 'Pod' }, soon());
      expect(reply.status).to.equal(400);
      expect(reply.record).to.deep.include({ resource: 'unknown', result: 'error' });
    });
  });
});
