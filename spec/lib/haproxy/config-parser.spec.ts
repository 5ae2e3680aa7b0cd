import { expect } from 'chai';
import { parseConfig, tokenizeLine } from '../../../lib/haproxy/config-parser.ts';
import type { Section } from '../../../lib/haproxy/config-parser.ts';

function words(line: string): string[] {
  return tokenizeLine(line).words;
}

function section(text: string, index: number): Section {
  const found = parseConfig(text).sections[index];
  if (!found) throw new Error(`no section ${index}`);
  return found;
}

describe('tokenizeLine', () => {
  it('splits on runs of spaces and tabs and skips leading ones', () => {
    expect(words('  \tbind\t *:80   ssl ')).to.deep.equal(['bind', '*:80', 'ssl']);
    expect(words('')).to.deep.equal([]);
    expect(words(' \t ')).to.deep.equal([]);
  });

  it('reads a plain line (no quote, escape or comment) as the full rules read it', () => {
    // A trailing comment sends the line through the full rules; the words must not change.
    for (const line of ['server s1 10.0.0.1:80 check weight 10', '\t  bind :443 ssl crt /etc/haproxy/certs/  ', 'x', '', ' \v\f ', 'use_backend b if { path_beg /$x }']) {
      expect(tokenizeLine(line), JSON.stringify(line)).to.deep.equal({ ...tokenizeLine(`${line} #c`), comment: undefined });
    }
  });

  it('starts a comment at an unquoted, unescaped #', () => {
    expect(tokenizeLine('timeout client 30s # half a minute')).to.deep.equal({
      words: ['timeout', 'client', '30s'],
      comment: ' half a minute',
      variables: [],
    });
    expect(tokenizeLine('k#l')).to.deep.equal({ words: ['k'], comment: 'l', variables: [] });
    expect(tokenizeLine('# only a comment')).to.deep.equal({ words: [], comment: ' only a comment', variables: [] });
    expect(tokenizeLine('no comment').comment).to.equal(undefined);
  });

  it('keeps # inside quotes and when escaped', () => {
    expect(tokenizeLine('a "i#j" \'#\' g\\#h').words).to.deep.equal(['a', 'i#j', '#', 'g#h']);
    expect(tokenizeLine('a "i#j"').comment).to.equal(undefined);
  });

  it('groups double-quoted text, where backslash escapes still apply', () => {
    expect(words('string "a b" "x\\"y" "a\\\\b" "\\#" "x\\ y"')).to.deep.equal(['string', 'a b', 'x"y', 'a\\b', '#', 'x y']);
  });

  it('groups single-quoted text literally', () => {
    expect(words("'e\\ f' 'a\\\\b' 'p\"q' 'a b'")).to.deep.equal(['e\\ f', 'a\\\\b', 'p"q', 'a b']);
  });

  it('joins quoted and unquoted parts of one word and removes the quotes', () => {
    expect(words('"a b"c\'d e\'f')).to.deep.equal(['a bcd ef']);
    expect(words('"a\'b" a\\"b a\\\'b')).to.deep.equal(["a'b", 'a"b', "a'b"]);
  });

  it('unescapes \\<space>, \\\\, \\t, \\xHH and keeps other backslashes', () => {
    expect(words('a\\ b c\\\\d \\x41B \\tT \\zz \\x4 end\\')).to.deep.equal(['a b', 'c\\d', 'AB', '\tT', '\\zz', '\\x4', 'end\\']);
  });

  it('keeps empty quoted words except at the end of the line, like HAProxy', () => {
    expect(words('a "" b')).to.deep.equal(['a', '', 'b']);
    expect(words('a ""')).to.deep.equal(['a']);
    expect(words('a "" ')).to.deep.equal(['a', '']);
  });

  it('does not expand environment variables, but says which words HAProxy would expand', () => {
    const line = '"$HOME" \'$HOME\' "${HOME}" "\\$HOME" $HOME "$1" x"${.LINE}"y';
    expect(words(line)).to.deep.equal(['$HOME', '$HOME', '${HOME}', '\\$HOME', '$HOME', '$1', 'x${.LINE}y']);
    // Only inside double quotes, not escaped, and starting a name: unquoted and single-quoted $ are literal.
    expect(tokenizeLine(line).variables).to.deep.equal([0, 2, 6]);
  });

  it('ends the line at a carriage return and runs an unclosed quote to the end', () => {
    expect(words('mode http\r')).to.deep.equal(['mode', 'http']);
    expect(words('a "b c')).to.deep.equal(['a', 'b c']);
  });
});

describe('parseConfig', () => {
  const config = [
    '# rendered', //                         1
    'global', //                             2
    '  maxconn 100 # per process', //        3
    '', //                                   4
    'defaults', //                           5
    '  mode http', //                        6
    'frontend http', //                      7
    '  bind *:80', //                        8
    '  default_backend web', //              9
    'backend web', //                        10
    '  balance roundrobin', //               11
    '  default-server check', //             12
    '  server s1 10.0.0.1:8080 check weight 50', // 13
    '  # a comment between servers', //      14
    '  server s2 10.0.0.2:8080 disabled', //  15
    'listen stats', //                       16
    '  bind *:8404', //                      17
    '  server local 127.0.0.1:8405', //      18
    'peers mesh', //                         19
    '  server hap1 10.1.0.1:1024', //        20
  ].join('\n');

  it('splits sections with their keyword, name, header words and line', () => {
    const { sections } = parseConfig(config);
    expect(sections.map((s) => [s.keyword, s.name, s.line])).to.deep.equal([
      ['global', undefined, 2],
      ['defaults', undefined, 5],
      ['frontend', 'http', 7],
      ['backend', 'web', 10],
      ['listen', 'stats', 16],
      ['peers', 'mesh', 19],
    ]);
    expect(sections[3]?.words).to.deep.equal(['backend', 'web']);
  });

  it('keeps directive lines with 1-based line numbers, without comments and blank lines', () => {
    expect(section(config, 0).lines).to.deep.equal([{ words: ['maxconn', '100'], line: 3 }]);
    expect(section(config, 2).lines).to.deep.equal([
      { words: ['bind', '*:80'], line: 8 },
      { words: ['default_backend', 'web'], line: 9 },
    ]);
  });

  it('takes server lines of backends and listens out of the lines, keeping default-server', () => {
    const web = section(config, 3);
    expect(web.lines.map((line) => line.words[0])).to.deep.equal(['balance', 'default-server']);
    expect(web.servers).to.deep.equal([
      {
        name: 's1',
        address: '10.0.0.1',
        port: 8080,
        options: ['check', 'weight', '50'],
        weight: 50,
        disabled: false,
        line: 13,
      },
      {
        name: 's2',
        address: '10.0.0.2',
        port: 8080,
        options: ['disabled'],
        weight: undefined,
        disabled: true,
        line: 15,
      },
    ]);
    expect(section(config, 4).servers.map((server) => server.name)).to.deep.equal(['local']);
  });

  it('leaves server lines of other sections (peers, rings) as lines', () => {
    const peers = section(config, 5);
    expect(peers.servers).to.deep.equal([]);
    expect(peers.lines).to.deep.equal([{ words: ['server', 'hap1', '10.1.0.1:1024'], line: 20 }]);
  });

  it('reads every address form', () => {
    const text = [
      'backend b',
      '  server v4 10.0.0.1:8080',
      '  server v6 fd00::1:8080',
      '  server v6b [fd00::1]:8080',
      '  server v6n [fd00::1]',
      '  server h4 ipv4@10.0.0.1:80',
      '  server h6 ipv6@fd00::2:81',
      '  server name web.local:80',
      '  server noport 10.0.0.1',
      '  server sock unix@/run/app.sock',
      '  server path /run/app.sock',
      '  server offset 10.0.0.1:+1',
    ].join('\n');
    expect(section(text, 0).servers.map((s) => [s.name, s.address, s.port])).to.deep.equal([
      ['v4', '10.0.0.1', 8080],
      ['v6', 'fd00::1', 8080],
      ['v6b', 'fd00::1', 8080],
      ['v6n', 'fd00::1', 0],
      ['h4', '10.0.0.1', 80],
      ['h6', 'fd00::2', 81],
      ['name', 'web.local', 80],
      ['noport', '10.0.0.1', 0],
      ['sock', 'unix@/run/app.sock', 0],
      ['path', '/run/app.sock', 0],
      ['offset', '10.0.0.1:+1', 0],
    ]);
  });

  it('lets the last weight and the last of disabled/enabled win', () => {
    const text = ['backend b', '  server a 10.0.0.1:80 weight 5 disabled weight 7 enabled', '  server c 10.0.0.3:80 enabled disabled'].join('\n');
    const [a, c] = section(text, 0).servers;
    expect([a?.weight, a?.disabled, c?.weight, c?.disabled]).to.deep.equal([7, false, undefined, true]);
  });

  it('keeps a server line without an address as a line', () => {
    expect(section('backend b\n  server lonely', 0).lines).to.deep.equal([{ words: ['server', 'lonely'], line: 2 }]);
  });

  it('puts lines before the first section into a pseudo-section, only when there are some', () => {
    const { sections } = parseConfig('# header\n.notice hello\nglobal\n  maxconn 1');
    const { keyword, name, words: header, line, lines, servers, source } = sections[0]!;
    expect({ keyword, name, header, line, lines, servers, source }).to.deep.equal({
      keyword: '',
      name: undefined,
      header: [],
      line: 2,
      lines: [{ words: ['.notice', 'hello'], line: 2 }],
      servers: [],
      source: '.notice hello\n',
    });
    expect(parseConfig('# header\nglobal').sections.map((s) => s.keyword)).to.deep.equal(['global']);
  });

  it('names defaults sections, including defaults that only inherit', () => {
    const { sections } = parseConfig('defaults tuned\ndefaults from tuned\ndefaults\nbackend b from tuned');
    expect(sections.map((s) => s.name)).to.deep.equal(['tuned', undefined, undefined, 'b']);
    expect(sections[3]?.words).to.deep.equal(['backend', 'b', 'from', 'tuned']);
  });

  it('knows all HAProxy 2.6 section keywords', () => {
    const keywords = [
      'global',
      'defaults',
      'frontend',
      'backend',
      'listen',
      'userlist',
      'peers',
      'resolvers',
      'mailers',
      'program',
      'http-errors',
      'ring',
      'cache',
      'fcgi-app',
      'log-forward',
    ];
    const text = keywords.map((keyword) => `${keyword} x`).join('\n');
    expect(parseConfig(text).sections.map((s) => s.keyword)).to.deep.equal(keywords);
  });

  it('skips lines whose first word is empty, as HAProxy does, and handles CRLF', () => {
    const { sections } = parseConfig('global\r\n  "" maxconn 1\r\n  maxconn 2\r\n');
    expect(sections[0]?.lines).to.deep.equal([{ words: ['maxconn', '2'], line: 3 }]);
  });

  it('gives each section its text as its source, from its first line to the next section’s, comments and blank lines included', () => {
    const text = '# top\nglobal\n  maxconn 1\n\n# web\nbackend web\n  server s 127.0.0.1:80\n';
    expect(parseConfig(text).sections.map((s) => s.source)).to.deep.equal(['global\n  maxconn 1\n\n# web\n', 'backend web\n  server s 127.0.0.1:80\n']);
  });

  it('finds a header written with quotes or escapes as HAProxy reads it', () => {
    const { sections } = parseConfig('"backend" quoted\n  server s 127.0.0.1:80\nback\\x65nd escaped\n  server t 127.0.0.2:80\n"" backend not-a-header');
    expect(sections.map((s) => [s.keyword, s.name, s.servers.map((server) => server.name)])).to.deep.equal([
      ['backend', 'quoted', ['s']],
      ['backend', 'escaped', ['t']],
    ]);
  });

  it('reads every line as tokenizing each one would, whatever the mix of headers, servers, quotes, comments and line ends', () => {
    const pieces = [
      'backend b',
      'listen l',
      'peers p',
      'defaults',
      'frontend "f x"',
      '  server s 10.0.0.1:80 weight 2',
      '  server q',
      '  mode http',
      '  "" skipped',
      '  # note',
      '',
      '  acl a path -m beg "/x y"',
      "  'use_backend' b",
      '\tbind :80 # c',
    ];
    let state = 3;
    const random = (n: number) => Math.floor(((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    for (let round = 0; round < 200; round++) {
      const lines = Array.from({ length: 1 + random(14) }, () => pieces[random(pieces.length)]!);
      const text = lines.join(random(4) === 0 ? '\r\n' : '\n');
      // The oracle: every line tokenized in turn, sorted into sections as the parser's contract says.
      const expected: { keyword: string; lines: { words: string[]; line: number }[]; servers: string[] }[] = [];
      text.split('\n').forEach((raw, index) => {
        const tokens = words(raw);
        const first = tokens[0];
        if (first === undefined || first === '') return;
        if (['backend', 'listen', 'peers', 'defaults', 'frontend'].includes(first)) return void expected.push({ keyword: first, lines: [], servers: [] });
        if (expected.length === 0) expected.push({ keyword: '', lines: [], servers: [] });
        const current = expected.at(-1)!;
        if (first === 'server' && tokens.length >= 3 && ['backend', 'listen'].includes(current.keyword)) current.servers.push(tokens[1]!);
        else current.lines.push({ words: tokens, line: index + 1 });
      });
      const parsed = parseConfig(text).sections.map((s) => ({
        keyword: s.keyword,
        lines: s.lines.map(({ words: w, line }) => ({ words: [...w], line })),
        servers: s.servers.map((server) => server.name),
      }));
      expect(parsed, JSON.stringify(text)).to.deep.equal(expected);
    }
  });
});
