import { expect } from 'chai';
import { planDeployment } from '../../../lib/haproxy/plan.ts';
import type { Plan } from '../../../lib/haproxy/plan-types.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';

function files(config: string, extra: Partial<Omit<RenderedFiles, 'config'>> = {}): RenderedFiles {
  return { config, maps: {}, certificates: {}, files: {}, ...extra };
}

function lines(...text: string[]): string {
  return `${text.join('\n')}\n`;
}

/** A backend with the given directive and server lines, after a plain global/defaults. */
function withBackend(...body: string[]): string {
  return lines('global', '  maxconn 100', 'defaults', '  mode http', 'backend web', ...body.map((line) => `  ${line}`));
}

/** Files with `withBackend` as the configuration. */
function web(...body: string[]): RenderedFiles {
  return files(withBackend(...body));
}

/** The plan for adding server b next to server a, in the configuration `config` makes of server lines. */
function addingB(config: (servers: string[]) => string): Plan {
  const a = '  server a 10.0.0.1:80';
  return planDeployment(files(config([a])), files(config([a, '  server b 10.0.0.2:80'])));
}

function reasonOf(plan: Plan): string {
  if (plan.kind !== 'reload') throw new Error(`expected a reload, got ${JSON.stringify(plan)}`);
  return plan.reason;
}

function reason(deployed: RenderedFiles, desired: RenderedFiles): string {
  const plan = planDeployment(deployed, desired);
  if (plan.kind !== 'reload') throw new Error(`expected a reload, got ${JSON.stringify(plan)}`);
  return plan.reason;
}

describe('planDeployment', () => {
  describe('nothing to do', () => {
    it('is empty for identical files', () => {
      const rendered = files(withBackend('server a 10.0.0.1:80'), { maps: { 'host.map': 'a b\n' } });
      expect(planDeployment(rendered, { ...rendered })).to.deep.equal({ kind: 'empty' });
    });

    it('is empty when only comments, blank lines, spacing or quoting changed', () => {
      const deployed = files(withBackend('balance roundrobin', 'server a 10.0.0.1:80 check'), {
        maps: { 'host.map': 'a.example.com a\nb.example.com b\n' },
      });
      const desired = files(
        lines(
          '# rendered by the controller',
          'global',
          '\tmaxconn   100   # per process',
          '',
          'defaults',
          '  mode "http"',
          'backend web',
          '  balance roundrobin',
          '',
          "  server a 10.0.0.1:80 'check'",
        ),
        { maps: { 'host.map': '# hosts\na.example.com    a  \n\nb.example.com\tb' } },
      );
      expect(planDeployment(deployed, desired)).to.deep.equal({ kind: 'empty' });
    });
  });

  describe('servers', () => {
    const deployed = web('server a 10.0.0.1:80 check', 'server b 10.0.0.2:80 check');

    it('adds a server with its ServerSpec', () => {
      const desired = web('server a 10.0.0.1:80 check', 'server b 10.0.0.2:80 check', 'server c 10.0.0.3:8080 check weight 20');
      expect(planDeployment(deployed, desired)).to.deep.equal({
        kind: 'runtime',
        operations: [
          {
            type: 'addServer',
            backend: 'web',
            server: {
              name: 'c',
              address: '10.0.0.3',
              port: 8080,
              options: ['check', 'weight', '20'],
              weight: 20,
              disabled: false,
            },
          },
        ],
      });
    });

    it('deletes a removed server', () => {
      const desired = web('server a 10.0.0.1:80 check');
      expect(planDeployment(deployed, desired)).to.deep.equal({
        kind: 'runtime',
        operations: [{ type: 'deleteServer', backend: 'web', server: 'b' }],
      });
    });

    it('updates only the address or port that changed', () => {
      const desired = web('server a 10.0.0.9:80 check', 'server b 10.0.0.2:81 check');
      expect(planDeployment(deployed, desired)).to.deep.equal({
        kind: 'runtime',
        operations: [
          { type: 'updateServer', backend: 'web', server: 'a', address: '10.0.0.9' },
          { type: 'updateServer', backend: 'web', server: 'b', port: 81 },
        ],
      });
    });

    it('updates weights and maintenance state', () => {
      const before = web('server a 10.0.0.1:80 check weight 10', 'server b 10.0.0.2:80 check disabled');
      const after = web('server a 10.0.0.1:80 check weight 30 disabled', 'server b 10.0.0.2:80 check');
      expect(planDeployment(before, after)).to.deep.equal({
        kind: 'runtime',
        operations: [
          { type: 'updateServer', backend: 'web', server: 'a', weight: 30, disabled: true },
          { type: 'updateServer', backend: 'web', server: 'b', disabled: false },
        ],
      });
    });

    it('counts a server without weight as weight 1, or the default-server weight', () => {
      const plain = web('server a 10.0.0.1:80 weight 5');
      expect(planDeployment(plain, web('server a 10.0.0.1:80'))).to.deep.equal({
        kind: 'runtime',
        operations: [{ type: 'updateServer', backend: 'web', server: 'a', weight: 1 }],
      });
      expect(planDeployment(web('server a 10.0.0.1:80 weight 1'), web('server a 10.0.0.1:80'))).to.deep.equal({
        kind: 'empty',
      });
      const inherited = web('default-server weight 10', 'server a 10.0.0.1:80 weight 5');
      expect(planDeployment(inherited, web('default-server weight 10', 'server a 10.0.0.1:80'))).to.deep.equal({
        kind: 'runtime',
        operations: [{ type: 'updateServer', backend: 'web', server: 'a', weight: 10 }],
      });
    });

    it('reloads when other options of a server change', () => {
      const desired = web('server a 10.0.0.1:80 check inter 3s', 'server b 10.0.0.2:80 check');
      expect(reason(deployed, desired)).to.equal('backend web: server a options changed from "check" to "check inter 3s"');
    });

    it('reloads for an address change to a host name or to or from no port', () => {
      const name = web('server a web.local:80 check', 'server b 10.0.0.2:80 check');
      expect(reason(deployed, name)).to.equal('backend web: server a address changed from 10.0.0.1:80 to web.local:80, which set server addr cannot apply (it takes IP addresses only)');
      const noPort = web('server a 10.0.0.1 check', 'server b 10.0.0.2:80 check');
      expect(reason(deployed, noPort)).to.equal("backend web: server a address changed from 10.0.0.1:80 to 10.0.0.1, which set server addr cannot apply (no port means the client's port)");
    });

    it('reloads when a server moves across a default-server line', () => {
      const before = web('server a 10.0.0.1:80', 'default-server check');
      const after = web('default-server check', 'server a 10.0.0.1:80');
      expect(reason(before, after)).to.equal('backend web: server a moved across default-server lines');
    });

    it('ignores a reordering of servers', () => {
      const desired = web('server b 10.0.0.2:80 check', 'server a 10.0.0.1:80 check');
      expect(planDeployment(deployed, desired)).to.deep.equal({ kind: 'empty' });
    });

    it('plans servers of listen sections too', () => {
      const before = files(lines('listen app', '  bind :80', '  server a 10.0.0.1:80'));
      const after = files(lines('listen app', '  bind :80', '  server a 10.0.0.1:80', '  server b 10.0.0.2:80'));
      const plan = planDeployment(before, after);
      expect(plan.kind === 'runtime' && plan.operations.map((operation) => operation.type)).to.deep.equal(['addServer']);
    });
  });

  describe('servers add server cannot add', () => {
    function addTo(...body: string[]): string {
      return reason(web(...body, 'server a 10.0.0.1:80'), web(...body, 'server a 10.0.0.1:80', 'server b 10.0.0.2:80'));
    }

    it('reloads for balance static-rr but deletes, disables and readdresses at runtime', () => {
      expect(addTo('balance static-rr')).to.equal('backend web: server b added but balance static-rr is a static load-balancing algorithm');
      const before = web('balance static-rr', 'server a 10.0.0.1:80', 'server b 10.0.0.2:80');
      const after = web('balance static-rr', 'server a 10.0.0.5:80 disabled');
      expect(planDeployment(before, after)).to.deep.equal({
        kind: 'runtime',
        operations: [
          { type: 'updateServer', backend: 'web', server: 'a', address: '10.0.0.5', disabled: true },
          { type: 'deleteServer', backend: 'web', server: 'b' },
        ],
      });
    });

    it('reloads for a weight change under a static algorithm', () => {
      const before = web('balance static-rr', 'server a 10.0.0.1:80');
      const after = web('balance static-rr', 'server a 10.0.0.1:80 weight 5');
      expect(reason(before, after)).to.equal('backend web: server a weight changed from 1 to 5 but balance static-rr is a static load-balancing algorithm');
    });

    it('reloads for hash algorithms unless hash-type is consistent', () => {
      expect(addTo('balance source')).to.equal(
        'backend web: server b added but balance source with hash-type map-based is a static load-balancing algorithm (hash-type consistent is dynamic)',
      );
      expect(addTo('balance hdr(host)')).to.match(/balance hdr\(host\) with hash-type map-based/);
      expect(addTo('balance url_param id')).to.match(/balance url_param id with hash-type/);
      expect(addTo('balance uri', 'hash-type map-based sdbm')).to.match(/with hash-type map-based/);
      const consistent = planDeployment(
        web('balance uri', 'hash-type consistent', 'server a 10.0.0.1:80'),
        web('balance uri', 'hash-type consistent', 'server a 10.0.0.1:80', 'server b 10.0.0.2:80'),
      );
      expect(consistent.kind).to.equal('runtime');
    });

    it('adds at runtime under roundrobin, leastconn, first and random', () => {
      for (const algorithm of ['roundrobin', 'leastconn', 'first', 'random', 'random(3)']) {
        const plan = planDeployment(web(`balance ${algorithm}`, 'server a 10.0.0.1:80'), web(`balance ${algorithm}`, 'server a 10.0.0.1:80', 'server b 10.0.0.2:80'));
        expect(plan.kind, algorithm).to.equal('runtime');
      }
    });

    it('takes balance and hash-type from the defaults section the backend uses', () => {
      const config = (servers: string[]): string =>
        lines('defaults hashed', '  balance source', 'defaults', '  balance roundrobin', 'backend implicit', ...servers, 'backend explicit from hashed', ...servers);
      expect(reasonOf(addingB(config))).to.match(/^backend explicit: server b added but balance source with/);
      const inherited = (servers: string[]): string => lines('defaults base', '  balance static-rr', 'defaults from base', 'backend b', ...servers);
      expect(reasonOf(addingB(inherited))).to.match(/^backend b: server b added but balance static-rr/);
      // A defaults section without `from` starts afresh.
      const reset = (servers: string[]): string => lines('defaults', '  balance static-rr', 'defaults', '  mode http', 'backend b', ...servers);
      expect(addingB(reset).kind).to.equal('runtime');
    });

    it('reloads when the backend sets a cookie, but deletes at runtime', () => {
      expect(addTo('cookie SRV insert indirect')).to.equal('backend web: server b added but the backend sets a cookie (add server cannot give the server one)');
      const before = web('cookie SRV insert', 'server a 10.0.0.1:80 cookie a', 'server b 10.0.0.2:80 cookie b');
      const after = web('cookie SRV insert', 'server a 10.0.0.1:80 cookie a');
      expect(planDeployment(before, after).kind).to.equal('runtime');
    });

    it('reloads when default-server settings apply, from the backend or its defaults', () => {
      expect(addTo('default-server inter 3s')).to.equal('backend web: server b added but default-server settings apply (add server ignores them)');
      const config = (servers: string[]): string => lines('defaults', '  default-server check', 'backend web', ...servers);
      expect(reasonOf(addingB(config))).to.equal('backend web: server b added but default-server settings apply (add server ignores them)');
    });

    it('reloads for an added server with an option add server does not support', () => {
      const before = web('server a 10.0.0.1:80');
      const add = (options: string): string => reason(before, web('server a 10.0.0.1:80', `server b 10.0.0.2:80 ${options}`));
      expect(add('check track web/a')).to.equal('backend web: server b added with option "track", which add server does not support');
      expect(add('init-addr none')).to.match(/option "init-addr", which add server does not support/);
      expect(add('cookie b')).to.match(/option "cookie"/);
      expect(add('check inter')).to.equal('backend web: server b added with option "inter" without a value');
    });

    it('adds a server with supported options, values included', () => {
      const options = ['check inter 2s fall 3 rise 2 weight 10 maxconn 100', 'ssl verify none sni str(app) alpn h2 send-proxy-v2 disabled'].join(' ');
      const plan = planDeployment(web('server a 10.0.0.1:80'), web('server a 10.0.0.1:80', `server b 10.0.0.2:443 ${options}`));
      expect(plan.kind === 'runtime' && plan.operations[0]).to.deep.include({ type: 'addServer', backend: 'web' });
    });

    it('reloads for an added server naming a file HAProxy has not loaded', () => {
      const a = 'server a 10.0.0.1:443 ssl verify required ca-file ca.pem';
      const add = (options: string): Plan => planDeployment(web(a), web(a, `server b 10.0.0.2:443 ${options}`));
      expect(add('ssl verify required ca-file ca.pem').kind).to.equal('runtime');
      expect(add('ssl verify required ca-file @system-ca').kind).to.equal('runtime');
      expect(add('ssl verify required ca-file other.pem')).to.deep.equal({
        kind: 'reload',
        reason: 'backend web: server b added with "ca-file other.pem", a file HAProxy has not loaded (files are read only at start)',
      });
      expect(add('ssl crt client.pem').kind).to.equal('reload');
    });

    it('reloads for an added server with a host name, which add server does not resolve', () => {
      const a = 'server a 10.0.0.1:80';
      expect(reason(web(a), web(a, 'server b web.local:80'))).to.equal('backend web: server b added with address web.local, which add server cannot use (it needs an IP address)');
      expect(planDeployment(web(a), web(a, 'server b [fd00::2]:80')).kind).to.equal('runtime');
    });

    it('reloads for a server name used twice', () => {
      expect(reason(web('server a 10.0.0.1:80'), web('server a 10.0.0.1:80', 'server a 10.0.0.2:80'))).to.equal('backend web: server name a used twice');
    });
  });

  describe('configuration changes', () => {
    const base = lines(
      'global', //                      1
      '  maxconn 100', //               2
      '  stats timeout 30s', //         3
      'frontend http', //               4
      '  bind *:80', //                 5
      '  default_backend web', //       6
      'backend web', //                 7
      '  server a 10.0.0.1:80', //      8
    );

    it('names an added or removed section, and ignores the order of sections', () => {
      expect(reason(files(base), files(`${base}backend default_web_80\n  server a 10.0.0.1:80\n`))).to.equal('backend default_web_80 added');
      expect(reason(files(`${base}backend old\n`), files(base))).to.equal('backend old removed');
      expect(planDeployment(files(`${base}backend x\nbackend y\n`), files(`${base}backend y\nbackend x\n`))).to.deep.equal({
        kind: 'empty',
      });
      expect(reason(files(`# pre\n.notice hi\n${base}`), files(base))).to.equal('lines before the first section removed');
      expect(reason(files(base), files(`${base}backend web\n  server a 10.0.0.1:80\n`))).to.equal('backend web defined twice');
    });

    it('names an added, removed or changed line', () => {
      const https = base.replace('  bind *:80\n', '  bind *:80\n  bind *:443 ssl crt-list general/crt-list.txt\n');
      expect(reason(files(base), files(https))).to.equal('frontend http: "bind *:443 ssl crt-list general/crt-list.txt" added');
      expect(reason(files(https), files(base))).to.equal('frontend http: "bind *:443 ssl crt-list general/crt-list.txt" removed');
      expect(reason(files(base), files(base.replace('30s', '60s')))).to.equal('global: line 3 changed from "stats timeout 30s" to "stats timeout 60s"');
      // Lines of different keywords have no order in HAProxy: swapping them changes nothing.
      const swapped = base.replace('  maxconn 100\n  stats timeout 30s\n', '  stats timeout 30s\n  maxconn 100\n');
      expect(planDeployment(files(base), files(swapped))).to.deep.equal({ kind: 'empty' });
    });

    it('keeps the order of the lines of one keyword: http-request rules, use_backend', () => {
      const frontend = (...body: string[]) => files(lines('frontend f', '  bind :80', '  acl a path /a', ...body.map((line) => `  ${line}`)));
      expect(reason(frontend('http-request deny if a', 'http-request allow'), frontend('http-request allow', 'http-request deny if a'))).to.equal(
        'frontend f: line 4 "http-request allow" moved',
      );
      expect(reason(frontend('use_backend x if a', 'use_backend y'), frontend('use_backend y', 'use_backend x if a'))).to.equal('frontend f: line 4 "use_backend y" moved');
      // Rules and use_backend interleaved differently: two keywords, each in its order.
      expect(planDeployment(frontend('http-request deny if a', 'use_backend y'), frontend('use_backend y', 'http-request deny if a'))).to.deep.equal({
        kind: 'empty',
      });
    });

    it('compares lines of a section with conditional blocks by position', () => {
      const guarded = (a: string, b: string) => lines('global', '.if defined(X)', `  ${a}`, '.endif', `  ${b}`);
      expect(reason(files(guarded('maxconn 1', 'nbthread 2')), files(guarded('nbthread 2', 'maxconn 1')))).to.match(/^global: line \d+ .* moved$/);
    });

    it('quotes words with spaces in reasons', () => {
      const before = lines('frontend f', '  http-request return string ok');
      const after = lines('frontend f', '  http-request return string "all ok"');
      expect(reason(files(before), files(after))).to.equal(`frontend f: line 2 changed from "http-request return string ok" to "http-request return string 'all ok'"`);
    });

    it('names a changed section header and a change of the defaults a proxy inherits', () => {
      expect(reason(files(base), files(base.replace('\nbackend web\n', '\nbackend web from tuned\n')))).to.equal('backend web: inherits from defaults tuned instead of no defaults section');
      const peers = lines('peers mine', '  peer a 127.0.0.1:1');
      expect(reason(files(peers), files(peers.replace('peers mine', 'peers mine extra')))).to.equal('peers mine: header changed from "peers mine" to "peers mine extra"');
      // One `from` written out, one implied: the same defaults.
      const implied = lines('defaults tuned', '  mode http', 'backend web', '  server a 10.0.0.1:80');
      expect(planDeployment(files(implied), files(implied.replace('backend web', 'backend web from tuned')))).to.deep.equal({ kind: 'empty' });
    });

    it('names a change of the defaults a proxy of unchanged text inherits, by another defaults section before it', () => {
      const before = lines('defaults a', '  mode http', 'backend web', '  server a 10.0.0.1:80');
      const after = lines('defaults a', '  mode http', 'defaults b', '  mode http', 'backend web', '  server a 10.0.0.1:80');
      expect(reason(files(before), files(after))).to.equal('defaults b added');
      const renamed = lines('defaults b', '  mode http', 'backend web', '  server a 10.0.0.1:80');
      expect(reason(files(before), files(renamed))).to.match(/^defaults (a removed|b added)$/);
    });

    it('reloads for a line change even when servers changed too', () => {
      const desired = base.replace('10.0.0.1', '10.0.0.2').replace('maxconn 100', 'maxconn 200');
      expect(reason(files(base), files(desired))).to.match(/^global: line 2 changed/);
    });
  });

  describe('maps', () => {
    const config = withBackend('server a 10.0.0.1:80');
    const map = (content: string) => files(config, { maps: { 'host.map': content } });

    it('updates a map with the whole content and entry-level changes', () => {
      const plan = planDeployment(map('a.example.com a\nb.example.com b\nc.example.com c\n'), map('a.example.com a\nb.example.com bb\nd.example.com d  with  spaces \n'));
      expect(plan).to.deep.equal({
        kind: 'runtime',
        operations: [
          {
            type: 'updateMap',
            map: 'host.map',
            entries: [
              ['a.example.com', 'a'],
              ['b.example.com', 'bb'],
              ['d.example.com', 'd  with  spaces'],
            ],
            before: [
              ['a.example.com', 'a'],
              ['b.example.com', 'b'],
              ['c.example.com', 'c'],
            ],
            added: [['d.example.com', 'd  with  spaces']],
            changed: [['b.example.com', 'bb']],
            removed: ['c.example.com'],
            references: [],
            ordered: false,
          },
        ],
      });
    });

    it('updates a map whose entries only changed order (map_sub takes the first match)', () => {
      const plan = planDeployment(map('/api/ api\n/ web\n'), map('/ web\n/api/ api\n'));
      expect(plan).to.deep.equal({
        kind: 'runtime',
        operations: [
          {
            type: 'updateMap',
            map: 'host.map',
            entries: [
              ['/', 'web'],
              ['/api/', 'api'],
            ],
            before: [
              ['/api/', 'api'],
              ['/', 'web'],
            ],
            added: [],
            changed: [],
            removed: [],
            references: [],
            ordered: false,
          },
        ],
      });
    });

    it('names the paths the configuration refers to a map by, and whether a lookup takes the first match in order', () => {
      const using = (...uses: string[]) => lines('frontend f', ...uses.map((use) => `  http-request set-var(txn.x) path,${use}`), '  http-request set-map(maps/x.map) a b');
      const plan = (text: string) => {
        const result = planDeployment(files(text, { maps: { 'x.map': 'a 1\n' } }), files(text, { maps: { 'x.map': 'a 2\n' } }));
        if (result.kind !== 'runtime' || result.operations[0]?.type !== 'updateMap') throw new Error(JSON.stringify(result));
        return { references: result.operations[0].references, ordered: result.operations[0].ordered };
      };
      expect(plan(using('map(/etc/haproxy/maps/x.map)', 'map_beg(/etc/haproxy/maps/x.map,none)', 'map_str_int(maps/other.map)'))).to.deep.equal({
        references: ['/etc/haproxy/maps/x.map', 'maps/x.map'],
        ordered: false,
      });
      expect(plan(using('map_ip(maps/x.map)'))).to.deep.include({ ordered: false });
      for (const method of ['sub', 'dir', 'dom', 'end', 'reg', 'regm', 'int']) {
        expect(plan(using(`map_${method}(maps/x.map)`)), method).to.deep.include({ ordered: true });
      }
    });

    it('keeps duplicate keys in entries and lets the last one win in the entry diff', () => {
      const plan = planDeployment(map('k 1\n'), map('k 2\nk 1\nkeyonly\n'));
      expect(plan).to.deep.equal({
        kind: 'runtime',
        operations: [
          {
            type: 'updateMap',
            map: 'host.map',
            entries: [
              ['k', '2'],
              ['k', '1'],
              ['keyonly', ''],
            ],
            before: [['k', '1']],
            added: [['keyonly', '']],
            changed: [],
            removed: [],
            references: [],
            ordered: false,
          },
        ],
      });
    });

    it('reads # as a comment only in the first column, as HAProxy does', () => {
      const plan = planDeployment(map('a 1\n'), map('# comment\na 1\n  # key\n'));
      expect(plan.kind === 'runtime' && plan.operations[0]).to.deep.include({ added: [['#', 'key']] });
    });

    it('reloads for an added or removed map file', () => {
      expect(reason(files(config), map('a b\n'))).to.equal('map file host.map added');
      expect(reason(map('a b\n'), files(config))).to.equal('map file host.map removed');
    });
  });

  describe('certificates and general files', () => {
    const config = withBackend('server a 10.0.0.1:80');

    it('updates a certificate whose content changed', () => {
      const before = files(config, { certificates: { 'default_site.pem': 'OLD PEM' } });
      const after = files(config, { certificates: { 'default_site.pem': 'NEW PEM' } });
      expect(planDeployment(before, after)).to.deep.equal({
        kind: 'runtime',
        operations: [{ type: 'updateCertificate', certificate: 'default_site.pem', pem: 'NEW PEM' }],
      });
    });

    it('reloads for an added or removed certificate', () => {
      const one = files(config, { certificates: { 'a.pem': 'A' } });
      const two = files(config, { certificates: { 'a.pem': 'A', 'b.pem': 'B' } });
      expect(reason(one, two)).to.equal('certificate b.pem added');
      expect(reason(two, one)).to.equal('certificate b.pem removed');
    });

    it('reloads for a changed, added or removed general file', () => {
      const before = files(config, { files: { 'crt-list.txt': 'ssl/a.pem a.example.com\n' } });
      const after = files(config, { files: { 'crt-list.txt': 'ssl/a.pem a.example.com b.example.com\n' } });
      expect(reason(before, after)).to.equal('general file crt-list.txt changed (general files are read only at start)');
      expect(reason(before, files(config, { files: { ...before.files, '404.http': 'x' } }))).to.equal('general file 404.http added');
    });
  });

  describe('operation order', () => {
    it('orders servers by backend then name, then maps, then certificates, by file name', () => {
      const config = (zeta: string[], alpha: string[]): string => lines('defaults', '  mode http', 'backend zeta', ...zeta, 'backend alpha', ...alpha);
      const before = files(config(['  server m 10.0.0.1:80', '  server b 10.0.0.2:80'], ['  server y 10.0.1.1:80']), {
        maps: { 'z.map': 'a 1\n', 'a.map': 'a 1\n' },
        certificates: { 'z.pem': '1', 'a.pem': '1' },
      });
      const after = files(config(['  server c 10.0.0.3:80', '  server b 10.0.0.2:80 weight 2', '  server a 10.0.0.4:80'], ['  server x 10.0.1.2:80']), {
        maps: { 'z.map': 'a 2\n', 'a.map': 'a 2\n' },
        certificates: { 'z.pem': '2', 'a.pem': '2' },
      });
      const plan = planDeployment(before, after);
      if (plan.kind !== 'runtime') throw new Error(JSON.stringify(plan));
      expect(
        plan.operations.map((operation) => {
          switch (operation.type) {
            case 'addServer':
              return `add ${operation.backend}/${operation.server.name}`;
            case 'deleteServer':
              return `delete ${operation.backend}/${operation.server}`;
            case 'updateServer':
              return `update ${operation.backend}/${operation.server}`;
            case 'updateMap':
              return `map ${operation.map}`;
            case 'updateCertificate':
              return `certificate ${operation.certificate}`;
          }
        }),
      ).to.deep.equal(['add alpha/x', 'delete alpha/y', 'add zeta/a', 'update zeta/b', 'add zeta/c', 'delete zeta/m', 'map a.map', 'map z.map', 'certificate a.pem', 'certificate z.pem']);
      expect(planDeployment(before, after)).to.deep.equal(plan);
    });
  });

  describe('the shipped template', () => {
    /** The configuration templates/config.yaml renders, with `backends` as name → server lines. */
    function shipped(backends: Record<string, string[]>, tls = false): string {
      return lines(
        'global',
        '  default-path origin /etc/haproxy',
        '  stats socket /var/run/haproxy/admin.sock mode 600 level admin expose-fd listeners',
        '  stats timeout 30s',
        '  log stdout format raw local0 info',
        '',
        'defaults',
        '  mode http',
        '  log global',
        '  option httplog',
        '  option dontlognull',
        '  timeout connect 5s',
        '  timeout client 30s',
        '  timeout server 30s',
        '  timeout http-request 10s',
        '  errorfile 404 general/404.http',
        '  errorfile 503 general/503.http',
        '',
        'frontend status',
        '  bind *:8404',
        '  http-request return status 200 content-type text/plain string ok if { path /healthz }',
        '  # Only a configuration the controller rendered answers /ready: the bootstrap one does not.',
        '  http-request return status 200 content-type text/plain string ready if { path /ready }',
        '  stats enable',
        '  stats uri /stats',
        '  stats refresh 10s',
        '',
        'frontend http',
        '  bind *:80',
        ...(tls ? ['  bind *:443 ssl crt-list general/crt-list.txt'] : []),
        '  http-request set-var(txn.path) path',
        '  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,map(maps/host.map)',
        '  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,regsub(^[^.]*,*),map(maps/host.map) if !{ var(txn.host) -m found }',
        '  http-request set-var(txn.host) str(*) if !{ var(txn.host) -m found }',
        '  http-request set-var(txn.route) var(txn.host),concat(,txn.path,)',
        '  http-request set-var(txn.backend) var(txn.route),map(maps/path-exact.map)',
        '  http-request set-var(txn.backend) var(txn.route),map_beg(maps/path-prefix.map) if !{ var(txn.backend) -m found }',
        '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
        '  default_backend default-404',
        '',
        'backend default-404',
        '  http-request deny deny_status 404',
        ...Object.entries(backends).flatMap(([name, servers]) => ['', `backend ${name}`, '  balance roundrobin', ...servers.map((server) => `  server ${server} check`)]),
      );
    }

    const maps = (prefix: string): Record<string, string> => ({
      'host.map': 'shop.example.com shop.example.com\n',
      'path-exact.map': '',
      'path-prefix.map': prefix,
    });
    const checked = (name: string, address: string, port: number) => ({
      name,
      address,
      port,
      options: ['check'],
      weight: undefined,
      disabled: false,
    });
    const general = { '404.http': 'HTTP/1.1 404 Not Found\r\n', '503.http': 'HTTP/1.1 503 Service Unavailable\r\n' };

    it('scales endpoints and reroutes paths at runtime', () => {
      const before = files(shipped({ default_web_http: ['srv-10.0.0.1-8081 10.0.0.1:8081'], default_api_8080: [] }), {
        maps: maps('shop.example.com/ default_web_http\n'),
        files: general,
      });
      const after = files(
        shipped({
          default_web_http: ['srv-10.0.0.1-8081 10.0.0.1:8081', 'srv-10.0.0.3-8081 10.0.0.3:8081'],
          default_api_8080: ['srv-10.0.1.1-18080 10.0.1.1:18080'],
        }),
        { maps: maps('shop.example.com/api/ default_api_8080\nshop.example.com/ default_web_http\n'), files: general },
      );
      const plan = planDeployment(before, after);
      expect(plan).to.deep.equal({
        kind: 'runtime',
        operations: [
          {
            type: 'addServer',
            backend: 'default_api_8080',
            server: checked('srv-10.0.1.1-18080', '10.0.1.1', 18080),
          },
          {
            type: 'addServer',
            backend: 'default_web_http',
            server: checked('srv-10.0.0.3-8081', '10.0.0.3', 8081),
          },
          {
            type: 'updateMap',
            map: 'path-prefix.map',
            entries: [
              ['shop.example.com/api/', 'default_api_8080'],
              ['shop.example.com/', 'default_web_http'],
            ],
            before: [['shop.example.com/', 'default_web_http']],
            added: [['shop.example.com/api/', 'default_api_8080']],
            changed: [],
            removed: [],
            references: ['maps/path-prefix.map'],
            ordered: false,
          },
        ],
      });
    });

    it('finds nothing to do between a configuration and the Data Plane API’s write-back of it', () => {
      const deployed = files(shipped({ default_web_http: ['srv-10.0.0.1-8081 10.0.0.1:8081'] }), { maps: maps(''), files: general });
      // What config-parser's String() writes for it (docs/dataplane-api-contract.md §3a): header, global,
      // defaults named, frontends then backends sorted, lines per keyword in the parser's order.
      const writtenBack = lines(
        '# _md5hash=0123456789abcdef0123456789abcdef',
        '# _version=7',
        '# Dataplaneapi managed File',
        '# changing file directly can cause a conflict if dataplaneapi is running',
        '',
        'global',
        '  default-path origin /etc/haproxy',
        '  stats socket /var/run/haproxy/admin.sock mode 600 level admin expose-fd listeners',
        '  stats timeout 30s',
        '  log stdout format raw local0 info',
        '',
        'defaults unnamed_defaults_1',
        '  mode http',
        '  log global',
        '  option httplog',
        '  option dontlognull',
        '  timeout http-request 10s',
        '  timeout connect 5s',
        '  timeout client 30s',
        '  timeout server 30s',
        '  errorfile 404 general/404.http',
        '  errorfile 503 general/503.http',
        '',
        'frontend http',
        '  bind *:80',
        '  http-request set-var(txn.path) path',
        '  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,map(maps/host.map)',
        '  http-request set-var(txn.host) req.hdr(host),field(1,:),lower,regsub(^[^.]*,*),map(maps/host.map) if !{ var(txn.host) -m found }',
        '  http-request set-var(txn.host) str(*) if !{ var(txn.host) -m found }',
        '  http-request set-var(txn.route) var(txn.host),concat(,txn.path,)',
        '  http-request set-var(txn.backend) var(txn.route),map(maps/path-exact.map)',
        '  http-request set-var(txn.backend) var(txn.route),map_beg(maps/path-prefix.map) if !{ var(txn.backend) -m found }',
        '  use_backend %[var(txn.backend)] if { var(txn.backend) -m found }',
        '  default_backend default-404',
        '',
        'frontend status',
        '  bind *:8404',
        '  stats enable',
        '  stats uri /stats',
        '  stats refresh 10s',
        '  http-request return status 200 content-type "text/plain" string "ok" if { path /healthz }',
        '  # Only a configuration the controller rendered answers /ready: the bootstrap one does not.',
        '  http-request return status 200 content-type "text/plain" string "ready" if { path /ready }',
        '',
        'backend default-404',
        '  http-request deny deny_status 404',
        '',
        'backend default_web_http',
        '  balance roundrobin',
        '  server srv-10.0.0.1-8081 10.0.0.1:8081 check',
      );
      expect(planDeployment({ ...deployed, config: writtenBack }, deployed)).to.deep.equal({ kind: 'empty' });
      // ...and a change is planned against it as against the configuration itself.
      const scaled = files(shipped({ default_web_http: ['srv-10.0.0.1-8081 10.0.0.1:8081', 'srv-10.0.0.2-8081 10.0.0.2:8081'] }), {
        maps: maps(''),
        files: general,
      });
      expect(planDeployment({ ...deployed, config: writtenBack }, scaled)).to.deep.equal({
        kind: 'runtime',
        operations: [{ type: 'addServer', backend: 'default_web_http', server: checked('srv-10.0.0.2-8081', '10.0.0.2', 8081) }],
      });
    });

    it('reloads for a new Ingress backend and for the first TLS certificate', () => {
      const before = files(shipped({ default_web_http: [] }), { maps: maps(''), files: general });
      const newBackend = files(shipped({ default_web_http: [], default_web_80: [] }), {
        maps: maps(''),
        files: general,
      });
      expect(reason(before, newBackend)).to.equal('backend default_web_80 added');
      const tls = files(shipped({ default_web_http: [] }, true), {
        maps: maps(''),
        certificates: { 'default_secure-tls.pem': 'PEM' },
        files: { ...general, 'crt-list.txt': 'ssl/default_secure-tls.pem secure.example.com\n' },
      });
      expect(reason(before, tls)).to.equal('frontend http: "bind *:443 ssl crt-list general/crt-list.txt" added');
    });
  });
});
