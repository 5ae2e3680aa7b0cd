import { expect } from 'chai';
import { readAnnotationSettings } from '../../../lib/annotations/read-settings.ts';
import { get, startHaproxy, type RunningHaproxy } from './haproxy-fixture.ts';

/**
 * The settings vocabulary promises templates that a rewrite's pattern and
 * replacement are literal inside single quotes, and a header value inside
 * double quotes (lib/routing/settings.ts). Checked with a real HAProxy:
 * values read from annotations, written that way, do what they say, with
 * the characters that mean something elsewhere (`#`, `'`, braces, `\1`)
 * taken literally.
 */
const H = 'haproxy.org/';
const N = 'nginx.ingress.kubernetes.io/';

function regexRewrite(annotations: Record<string, string>) {
  const read = readAnnotationSettings(annotations).route.rewrite;
  if (read?.kind !== 'regex' && read?.kind !== 'route-path') throw new Error(`not a regex rewrite: ${JSON.stringify(read)}`);
  return read;
}

describe('settings written as the vocabulary says, read by a real HAProxy', function () {
  this.timeout(30_000);
  let haproxy: RunningHaproxy;
  const regex = regexRewrite({ [`${H}path-rewrite`]: '/foo/(.*) /\\1' });
  const routePath = regexRewrite({ [`${N}rewrite-target`]: '/$2' });
  const header = readAnnotationSettings({ [`${H}request-set-header`]: "X-Policy default-src 'self' #1 {a} [b] (c); x=y" }).route.requestHeaders!.set![0]!;

  before(async () => {
    haproxy = await startHaproxy(
      (bind) => [
        'frontend fe',
        `  bind ${bind}`,
        `  http-request set-header ${header.name} "${header.value}"`,
        `  http-request replace-path '${regex.kind === 'regex' ? regex.rules[0]!.pattern : ''}' '${regex.kind === 'regex' ? regex.rules[0]!.replacement : ''}' if { path_beg /foo/ }`,
        // nginx's rewrite-target with captures: the route's own path (here /app(/|$)(.*)) is the pattern.
        `  http-request replace-path '^/app(/|$)(.*)' '${routePath.kind === 'route-path' ? routePath.replacement : ''}' if { path_beg /app }`,
        '  http-request return status 200 content-type text/plain lf-string "%[path] %[req.fhdr(x-policy)]"',
      ],
      async (port) => (await get(port, '/')).status === 200,
    );
  });

  after(async () => {
    await haproxy?.stop();
  });

  it('haproxy.org/path-rewrite: the regex and its \\1 capture', async () => {
    expect((await get(haproxy.port, '/foo/bar/baz')).body).to.match(/^\/bar\/baz /);
  });

  it('nginx rewrite-target "/$2": the route path\'s second capture', async () => {
    expect((await get(haproxy.port, '/app/x/y')).body).to.match(/^\/x\/y /);
  });

  it('a header value with quotes, "#", braces and brackets, set as it was written', async () => {
    expect((await get(haproxy.port, '/')).body).to.equal("/ default-src 'self' #1 {a} [b] (c); x=y");
  });
});
