import { expect } from 'chai';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';

const N = 'nginx.ingress.kubernetes.io/';

/** The outcomes of an Ingress in namespace "shop", by annotation without the prefix. */
function outcomes(annotations: Record<string, string>) {
  const read = readAnnotationSettings(Object.fromEntries(Object.entries(annotations).map(([name, value]) => [`${N}${name}`, value])), { namespace: 'shop', tls: true });
  return {
    setting: read.route.clientCertificate,
    status: Object.fromEntries(read.outcomes.map((outcome) => [outcome.annotation.slice(N.length), 'reason' in outcome ? `${outcome.status}: ${outcome.reason}` : outcome.status])),
  };
}

describe('client certificate authentication (nginx auth-tls-*)', () => {
  it("reads ingress-nginx's documented example: the Secret as namespace/name, verify on, depth 1, the certificate passed upstream", () => {
    // ingress-nginx docs/examples/auth/client-certs/ingress.yaml.
    const read = outcomes({
      'auth-tls-secret': 'default/ca-secret',
      'auth-tls-verify-client': 'on',
      'auth-tls-verify-depth': '1',
      'auth-tls-error-page': 'http://www.mysite.com/error-cert.html',
      'auth-tls-pass-certificate-to-upstream': 'true',
    });
    expect(read.setting).to.deep.equal({ ca: { namespace: 'default', name: 'ca-secret' }, verify: 'on', passCertificate: true, errorPage: 'http://www.mysite.com/error-cert.html' });
    expect(Object.values(read.status)).to.deep.equal(['honoured', 'honoured', 'honoured', 'honoured', 'honoured']);
  });

  it('defaults as ingress-nginx does: verify "on", nothing passed upstream, the Secret in the Ingress\'s namespace', () => {
    expect(outcomes({ 'auth-tls-secret': 'ca' }).setting).to.deep.equal({ ca: { namespace: 'shop', name: 'ca' }, verify: 'on', passCertificate: false });
  });

  it('reads optional and optional_no_ca; the error page of optional_no_ca is ignored, since it refuses nothing', () => {
    expect(outcomes({ 'auth-tls-secret': 'ca', 'auth-tls-verify-client': 'optional' }).setting?.verify).to.equal('optional');
    const noCa = outcomes({ 'auth-tls-secret': 'ca', 'auth-tls-verify-client': 'optional_no_ca', 'auth-tls-error-page': 'https://example.com/e' });
    expect(noCa.setting).to.deep.equal({ ca: { namespace: 'shop', name: 'ca' }, verify: 'optional_no_ca', passCertificate: false });
    expect(noCa.status['auth-tls-error-page']).to.equal('ignored: optional_no_ca refuses no certificate, so no error page is shown');
  });

  it('"off", or no auth-tls-secret, asks for no certificate: every auth-tls annotation is ignored and nothing is set', () => {
    const off = outcomes({ 'auth-tls-secret': 'ca', 'auth-tls-verify-client': 'off', 'auth-tls-pass-certificate-to-upstream': 'true' });
    expect(off.setting).to.equal(undefined);
    expect(off.status['auth-tls-secret']).to.equal('ignored: auth-tls-verify-client is "off": no client certificate is asked for');
    const none = outcomes({ 'auth-tls-verify-client': 'on' });
    expect(none.setting).to.equal(undefined);
    expect(none.status['auth-tls-verify-client']).to.match(/^ignored: auth-tls-secret is not set/);
  });

  it('says a depth other than 1 is not applied: HAProxy has no verification depth', () => {
    const read = outcomes({ 'auth-tls-secret': 'ca', 'auth-tls-verify-depth': '2' });
    expect(read.setting?.verify).to.equal('on');
    expect(read.status['auth-tls-verify-depth']).to.match(/^ignored: HAProxy has no verification depth/);
  });

  it('refuses a value it cannot read, naming the annotation: the Ingress is left out rather than served open', () => {
    const read = readAnnotationSettings({ [`${N}auth-tls-secret`]: 'ca', [`${N}auth-tls-verify-client`]: 'required', [`${N}auth-tls-error-page`]: '/relative' }, { namespace: 'shop' });
    const invalid = Object.fromEntries(read.outcomes.filter((outcome) => outcome.status === 'invalid').map((outcome) => [outcome.annotation, outcome.reason]));
    expect(Object.keys(invalid)).to.deep.equal([`${N}auth-tls-error-page`, `${N}auth-tls-verify-client`]);
    expect(invalid[`${N}auth-tls-verify-client`]).to.include('use "on", "optional", "optional_no_ca" or "off"');
    expect(read.route.clientCertificate).to.equal(undefined);
  });
});
