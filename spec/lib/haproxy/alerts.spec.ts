import { expect } from 'chai';
import { parseAlerts, underDirectory } from '../../../lib/haproxy/alerts.ts';

/** As HAProxy 2.6.12 prints them (from runs of haproxy -c, the paths moved to /tmp/v and the NOTICE lines left out). */
const nested = [
  "[ALERT]    (12380) : config : parsing [/tmp/v/haproxy.cfg:9] : 'bind 127.0.0.1:44321' in section 'frontend' : 'crt-list' : error processing line 2 in file '/tmp/v/general/crt-list.txt' : unable to load SSL certificate into SSL Context '/tmp/v/ssl/b.pem'.",
  '[ALERT]    (12380) : config : Error(s) found in configuration file : /tmp/v/haproxy.cfg',
].join('\n');
const tooMany =
  "[ALERT]    (12471) : config : parsing [/tmp/v/haproxy.cfg:9] : 'bind 127.0.0.1:44321' in section 'frontend' : 'crt-list' : parsing [/tmp/v/general/crt-list.txt:1]: too many args ";
const unlocated = "[ALERT]    (8) : config : Proxy 'http': unable to find required use_backend: 'nowhere'.";
const targets = new Set(['haproxy.cfg', 'general/crt-list.txt', 'ssl/b.pem']);
const relocate = underDirectory('/tmp/v', (target) => targets.has(target));
const clean = (text: string) => text.replaceAll('/tmp/v/', '');

describe('HAProxy alerts', () => {
  it('reads every place an alert names, outermost first, and what it says of the innermost', () => {
    expect(parseAlerts(nested, relocate, clean)).to.deep.equal([
      {
        message:
          "parsing [haproxy.cfg:9] : 'bind 127.0.0.1:44321' in section 'frontend' : 'crt-list' : error processing line 2 in file 'general/crt-list.txt' : unable to load SSL certificate into SSL Context 'ssl/b.pem'.",
        detail: "unable to load SSL certificate into SSL Context 'ssl/b.pem'.",
        locations: [
          { file: 'haproxy.cfg', line: 9 },
          { file: 'general/crt-list.txt', line: 2 },
        ],
        files: ['general/crt-list.txt', 'ssl/b.pem'],
        sections: [],
      },
    ]);
    expect(parseAlerts(tooMany, relocate, clean)[0]).to.deep.include({
      detail: 'too many args',
      locations: [
        { file: 'haproxy.cfg', line: 9 },
        { file: 'general/crt-list.txt', line: 1 },
      ],
    });
  });

  it('names the proxies an alert without a line speaks of, and leaves out files the render did not write', () => {
    expect(parseAlerts(unlocated, relocate)).to.deep.equal([
      {
        message: "Proxy 'http': unable to find required use_backend: 'nowhere'.",
        detail: "Proxy 'http': unable to find required use_backend: 'nowhere'.",
        locations: [],
        files: [],
        sections: ['http'],
      },
    ]);
    // A path outside the rendered files names no place: /etc/passwd is not one of them.
    expect(parseAlerts("[ALERT] (1) : config : parsing [/etc/haproxy/other.cfg:3] : cannot open '/etc/passwd'", relocate)[0]).to.deep.include({ locations: [], files: [] });
  });

  it('reads the lines the guard writes the way HAProxy writes its own, and skips the closing summaries', () => {
    const guard = '[ALERT]    (guard) : config : parsing [/tmp/v/haproxy.cfg:4] : lua-load loads and runs Lua code: "lua-load x.lua"; allowDirectives does not allow it';
    expect(parseAlerts(`${guard}\n[ALERT] (3) : Fatal errors found in configuration.`, relocate, clean)).to.deep.equal([
      {
        message: 'parsing [haproxy.cfg:4] : lua-load loads and runs Lua code: "lua-load x.lua"; allowDirectives does not allow it',
        detail: 'lua-load loads and runs Lua code: "lua-load x.lua"; allowDirectives does not allow it',
        locations: [{ file: 'haproxy.cfg', line: 4 }],
        files: [],
        sections: [],
      },
    ]);
  });
});
