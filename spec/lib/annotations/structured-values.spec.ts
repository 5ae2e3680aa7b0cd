import { parserTable } from './parser-table.ts';
import { parseHaproxyBalance, parseNginxBalance, parseUpstreamHashBy } from '../../../lib/annotations/balance.ts';
import { parseHeaderNames, parseMethods, parseOrigins } from '../../../lib/annotations/cors.ts';
import { parseHeaderLines } from '../../../lib/annotations/shared-rules.ts';

const unsupported = (what: string) => ({ unsupported: `${what} is not supported: the backend balances roundrobin` });

describe('annotation structured value parsers', () => {
  it("parseHaproxyBalance: the vocabulary's algorithms, other HAProxy algorithms unsupported, anything else refused", () => {
    parserTable(
      parseHaproxyBalance,
      [
        ['roundrobin', { balance: { algorithm: 'roundrobin' } }],
        ['leastconn', { balance: { algorithm: 'leastconn' } }],
        [' source ', { balance: { algorithm: 'source' } }],
        ['hdr(Host)', { balance: { algorithm: 'hdr', header: 'host' } }],
        ['url_param userid', { balance: { algorithm: 'url_param', parameter: 'userid' } }],
        ['static-rr', unsupported('"static-rr"')],
        ['random(2)', unsupported('"random(2)"')],
        ['uri whole', unsupported('"uri" with options')],
        ['hdr(host) use_domain_only', unsupported('"hdr" with options')],
      ],
      [
        ['fastest', 'not a balance algorithm: use roundrobin, leastconn, source, first, uri, hdr(name) or url_param name'],
        ['hdr(a;b)', 'not a balance algorithm: hdr(...): not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit'],
        ['url_param', 'not a balance algorithm: url_param needs a parameter name (letters, digits, "-", "_", ".")'],
        ['url_param a%b', 'not a balance algorithm: url_param needs a parameter name (letters, digits, "-", "_", ".")'],
      ],
    );
  });

  it('parseNginxBalance and parseUpstreamHashBy: nginx values read as the HAProxy algorithm nearest', () => {
    parserTable(
      parseNginxBalance,
      [
        ['round_robin', { balance: { algorithm: 'roundrobin' } }],
        ['ewma', { balance: { algorithm: 'leastconn' } }],
        ['chash', { unsupported: '"chash" is not supported on its own: use upstream-hash-by or affinity' }],
      ],
      [['least_conn', 'not a balance algorithm: use round_robin or ewma']],
    );
    parserTable(
      parseUpstreamHashBy,
      [
        ['$remote_addr', { balance: { algorithm: 'source' } }],
        ['$uri', { balance: { algorithm: 'uri' } }],
        ['$http_x_api_key', { balance: { algorithm: 'hdr', header: 'x-api-key' } }],
        ['$arg_user', { balance: { algorithm: 'url_param', parameter: 'user' } }],
        [
          '$request_uri$host',
          { unsupported: 'hashing on "$request_uri$host" has no HAProxy equivalent (supported: $remote_addr, $request_uri, $uri, $http_NAME, $arg_NAME): the backend balances roundrobin' },
        ],
      ],
      [['$http_x;drop', 'not an nginx variable: use one of $remote_addr, $request_uri, $uri, $http_NAME, $arg_NAME']],
    );
  });

  it('parseHeaderLines: one "Name value" a line, values free text, a double-quoted value without its quotes (as haproxytech hands it to HAProxy)', () => {
    parserTable(
      parseHeaderLines,
      [
        ['X-Team shop', [{ name: 'X-Team', value: 'shop' }]],
        ['Cache-Control "no-store,no-cache,private"', [{ name: 'Cache-Control', value: 'no-store,no-cache,private' }]],
        ['X-Empty ""', [{ name: 'X-Empty', value: '' }]],
        [
          'X-A  one two\n\nX-B 2\n',
          [
            { name: 'X-A', value: 'one two' },
            { name: 'X-B', value: '2' },
          ],
        ],
      ],
      [
        ['X-Team', 'header X-Team has no value: write "Name value", one header a line'],
        ['', 'no header: write "Name value", one header a line'],
        ['X-Team: shop', 'not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit'],
        ['X-A 1\nx-a 2', 'header x-a is set twice'],
        ['X-Src %[src]', 'the value of header X-Src contains "%", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
        ['X-A say "hi"', 'the value of header X-A contains "\\"", which HAProxy would read inside a quoted string (admitted: printable ASCII except " \\ $ %)'],
      ],
    );
  });

  it('parseOrigins, parseMethods, parseHeaderNames: "*" or lists', () => {
    parserTable(
      parseOrigins,
      [
        ['*', ['*']],
        ['https://a.example.com, http://b.example.com:8080', ['https://a.example.com', 'http://b.example.com:8080']],
        ['https://*.example.com', ['https://*.example.com']],
      ],
      [
        [
          '^https://(.+\\.)?example\\.com$',
          'not an origin: "^https://(.+\\\\.)?example\\\\.com$" (use "*" or origins like https://example.com, separated by commas; regular expressions are not supported)',
        ],
        ['https://a.com/path', 'not an origin: "https://a.com/path" (use "*" or origins like https://example.com, separated by commas; regular expressions are not supported)'],
      ],
    );
    parserTable(
      parseMethods,
      [
        ['*', ['*']],
        ['get, POST', ['GET', 'POST']],
      ],
      [['GET;DELETE', 'not a method: "GET;DELETE"']],
    );
    parserTable(
      parseHeaderNames,
      [['Content-Type,Authorization', ['Content-Type', 'Authorization']]],
      [['Content Type', 'not a header name: use letters, digits, "-", "_" and "." (at most 128), starting with a letter or digit']],
    );
  });
});
