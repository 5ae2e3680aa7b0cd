import { expect } from 'chai';
import { signinWithRedirect } from '../../../lib/annotations/external-auth.ts';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';

const N = 'nginx.ingress.kubernetes.io/';

/** What one annotation became. */
function outcomeOf(annotations: Record<string, string>, annotation: string) {
  return readAnnotationSettings(annotations).outcomes.find((outcome) => outcome.annotation === annotation);
}

describe('external authentication (nginx auth-url)', () => {
  it("reads ingress-nginx's oauth2-proxy example: the sign-in URL keeps its rd, its variables expanded per request", () => {
    // docs/examples/auth/oauth-external-auth of ingress-nginx, with the auth service named by its cluster DNS name.
    const read = readAnnotationSettings({
      [`${N}auth-url`]: 'http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth',
      [`${N}auth-signin`]: 'https://$host/oauth2/start?rd=$escaped_request_uri',
      [`${N}auth-response-headers`]: 'X-Auth-Request-User, X-Auth-Request-Email,',
    });
    expect(read.route.externalAuth).to.deep.equal({
      url: 'http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth',
      signin: 'https://$host/oauth2/start?rd=$escaped_request_uri',
      requestRedirect: '$request_uri',
      responseHeaders: ['X-Auth-Request-User', 'X-Auth-Request-Email'],
      alwaysSetCookie: false,
    });
    expect(read.outcomes.every((outcome) => outcome.status === 'honoured')).to.equal(true);
  });

  it('adds the redirect parameter as buildAuthSignURL does: ?rd=, &rd= after a query, none when the URL has it, auth-signin-redirect-param naming it', () => {
    const url = '$pass_access_scheme://$http_host$escaped_request_uri';
    expect(signinWithRedirect('https://auth.example.com/start', 'rd')).to.equal(`https://auth.example.com/start?rd=${url}`);
    expect(signinWithRedirect('https://auth.example.com/start?x=1', 'rd')).to.equal(`https://auth.example.com/start?x=1&rd=${url}`);
    expect(signinWithRedirect('https://auth.example.com/start?rd=/home', 'rd')).to.equal('https://auth.example.com/start?rd=/home');
    const read = readAnnotationSettings({
      [`${N}auth-url`]: 'http://auth.example.com/check',
      [`${N}auth-signin`]: 'https://auth.example.com/start',
      [`${N}auth-signin-redirect-param`]: 'next',
    });
    expect(read.route.externalAuth?.signin).to.equal(`https://auth.example.com/start?next=${url}`);
  });

  it('takes auth-method, auth-request-redirect and auth-always-set-cookie', () => {
    const read = readAnnotationSettings({
      [`${N}auth-url`]: 'http://auth.example.com/check',
      [`${N}auth-method`]: 'POST',
      [`${N}auth-request-redirect`]: 'https://$host/after',
      [`${N}auth-always-set-cookie`]: 'true',
    });
    expect(read.route.externalAuth).to.deep.include({ method: 'POST', requestRedirect: 'https://$host/after', alwaysSetCookie: true });
  });

  it('ignores caching and keepalive, saying why, and every auth annotation without auth-url', () => {
    const annotations = { [`${N}auth-url`]: 'http://auth.example.com/check', [`${N}auth-cache-key`]: '$cookie_session', [`${N}auth-keepalive`]: '10' };
    expect(outcomeOf(annotations, `${N}auth-cache-key`)).to.deep.include({ status: 'ignored', reason: 'auth answers are not cached: every request asks the auth service' });
    expect(outcomeOf(annotations, `${N}auth-keepalive`)).to.deep.include({ status: 'ignored' });
    expect(outcomeOf({ [`${N}auth-response-headers`]: 'X-User' }, `${N}auth-response-headers`)).to.deep.include({
      status: 'ignored',
      reason: 'auth-url is not set, so ingress-nginx does not use it either',
    });
  });

  it("leaves out haproxy.org/auth-url, which haproxytech's controller does not have (served open otherwise)", () => {
    const outcome = outcomeOf({ 'haproxy.org/auth-url': 'https://auth.example.com/oauth2/auth' }, 'haproxy.org/auth-url');
    expect(outcome?.status).to.equal('left out');
    expect(outcome && 'reason' in outcome ? outcome.reason : '').to.include('use nginx.ingress.kubernetes.io/auth-url');
  });

  const refused: [string, Record<string, string>, string, string][] = [
    ['nginx variables in auth-url (a request could pick the auth service)', { [`${N}auth-url`]: 'https://$host/oauth2/auth' }, 'auth-url', 'nginx variables are not supported in auth-url'],
    ['an auth-url that is not a URL', { [`${N}auth-url`]: 'oauth2-proxy/auth' }, 'auth-url', 'not a URL'],
    ['a quote in auth-url', { [`${N}auth-url`]: 'http://auth.example.com/"x' }, 'auth-url', 'contains'],
    [
      'an unknown variable in auth-signin',
      { [`${N}auth-url`]: 'http://a.example.com/', [`${N}auth-signin`]: 'https://a.example.com/start?u=$remote_user' },
      'auth-signin',
      '$remote_user is not supported',
    ],
    [
      'a header list with a bad name',
      { [`${N}auth-url`]: 'http://a.example.com/', [`${N}auth-response-headers`]: 'X-User, X User' },
      'auth-response-headers',
      '"X User" is not a header name',
    ],
    ['an unknown method', { [`${N}auth-url`]: 'http://a.example.com/', [`${N}auth-method`]: 'get' }, 'auth-method', 'not an HTTP method'],
  ];
  for (const [what, annotations, annotation, reason] of refused) {
    it(`refuses ${what}, leaving the Ingress out`, () => {
      const outcome = outcomeOf(annotations, `${N}${annotation}`);
      expect(outcome?.status).to.equal('invalid');
      expect(outcome && 'reason' in outcome ? outcome.reason : '').to.include(reason);
    });
  }
});
