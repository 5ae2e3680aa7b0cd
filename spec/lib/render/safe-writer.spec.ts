import { expect } from 'chai';
import Mustache from 'mustache';
import { AccessTracker } from '../../../lib/render/resource-views.ts';
import { LOG_FORMAT, QUOTED, SafeWriter } from '../../../lib/render/safe-writer.ts';

/**
 * The writer runs templates compiled from Mustache's parse tree with a
 * lookup and section logic of its own; for values that pass the HAProxy
 * checks it must produce exactly what Mustache itself produces.
 */

const frozen = <T extends object>(items: T[]): readonly T[] => Object.freeze(items.map((item) => Object.freeze(item)));

const cases: readonly { readonly name: string; readonly template: string; readonly view: Record<string, unknown>; readonly partials?: Record<string, string> }[] = [
  {
    name: 'values, dotted names and raw tags',
    template: 'a {{a}} {{b.c}} {{{d}}} {{&d}} {{missing}} {{b.missing}} {{n}} {{yes}}\n',
    view: { a: 'x', b: { c: 'y' }, d: 'two words', n: 8080, yes: true },
  },
  {
    name: 'sections over lists, objects, strings, numbers and true, with parent lookups',
    template:
      '{{#items}}{{name}}-{{outer}}{{#sub}}[{{.}}|{{name}}]{{/sub}}\n{{/items}}{{#object}}{{inner}} {{outer}}{{/object}}|{{#word}}{{.}}{{/word}}|{{#n}}{{.}}{{/n}}|{{#yes}}{{outer}}{{/yes}}\n',
    view: {
      outer: 'o',
      items: [
        { name: 'a', sub: ['1', '2'] },
        { name: 'b', sub: [] },
      ],
      object: { inner: 'i' },
      word: 'w',
      n: 7,
      yes: true,
    },
  },
  {
    name: 'inverted sections over falsy values and empty lists',
    template: '{{^empty}}e{{/empty}}{{^zero}}z{{/zero}}{{^blank}}b{{/blank}}{{^no}}n{{/no}}{{^nothing}}u{{/nothing}}{{^items}}i{{/items}}{{^full}}f{{/full}}\n',
    view: { empty: [], zero: 0, blank: '', no: false, nothing: null, full: ['x'] },
  },
  {
    name: 'standalone tags leave no blank lines',
    template: 'begin\n  {{#items}}\n  line {{name}}\n  {{/items}}\n  {{^items}}\n  none\n  {{/items}}\nend\n',
    view: { items: [{ name: 'a' }, { name: 'b' }] },
  },
  {
    name: 'partials, indented when standalone',
    template: 'a\n  {{> part}}\nb {{> part}}\n{{#items}}\n    {{> part}}\n{{/items}}\n',
    view: { name: 'root', items: [{ name: 'one' }, { name: 'two' }] },
    partials: { part: 'x {{name}}\ny\n' },
  },
  {
    name: 'comments and changed delimiters',
    template: '{{! a comment }}a{{=<% %>=}}<%name%> <%#items%><%name%><%/items%><%={{ }}=%> {{name}}\n',
    view: { name: 'n', items: [{ name: 'i' }] },
  },
  {
    name: 'a dotted name resolves where its whole path exists',
    template: '{{#items}}{{meta.tag}}/{{meta.name}} {{/items}}\n',
    view: { meta: { tag: 'root', name: 'r' }, items: [{ meta: { tag: 'own' } }, { other: 1 }] },
  },
  {
    name: 'functions are called with the view they were found from',
    template: '{{greeting}} {{#items}}{{label}} {{/items}}\n',
    view: {
      greeting: () => 'hello',
      items: [
        {
          name: 'a',
          label() {
            return `item-${(this as { name: string }).name}`;
          },
        },
        {
          name: 'b',
          label() {
            return `item-${(this as { name: string }).name}`;
          },
        },
      ],
    },
  },
  {
    name: 'lambda sections receive their text and a renderer for it',
    template: '{{#wrap}}in {{name}}{{/wrap}}\n',
    view: { name: 'x', wrap: () => (text: string, renderText: (text: string) => string) => `[${renderText(text)}]` },
  },
  {
    name: 'frozen lists of frozen items (the reusable kind)',
    template: '{{#backends}}\nbackend {{name}}\n{{#servers}}\n  server {{name}} {{address}}:{{port}} {{tag}}\n{{/servers}}\n{{/backends}}\n',
    view: {
      tag: 'check',
      backends: frozen([
        { name: 'b1', servers: frozen([{ name: 's1', address: '10.0.0.1', port: 80 }]) },
        { name: 'b2', servers: frozen([]) },
      ]),
    },
  },
];

function render(writer: SafeWriter, template: string, view: unknown, partials: Record<string, string> = {}): string {
  return writer.renderFile('templates.haproxyConfig', new Mustache.Writer().parse(template), view, partials, template).text;
}

describe('SafeWriter', () => {
  for (const { name, template, view, partials } of cases) {
    it(`renders as Mustache does: ${name}`, () => {
      const expected = new Mustache.Writer().render(template, view, partials, { escape: String });
      const writer = new SafeWriter(new AccessTracker());
      expect(render(writer, template, view, partials)).to.equal(expected);
      // Again with the same writer: reused output must not change what comes out.
      expect(render(writer, template, view, partials)).to.equal(expected);
      expect(render(writer, template, view, partials)).to.equal(expected);
      expect(writer.violations).to.deep.equal([]);
    });
  }

  it('leaves out an unsafe value and records its template, line and tag', () => {
    const writer = new SafeWriter(new AccessTracker());
    const text = render(writer, 'a\n  server {{name}} {{{raw}}}\n', { name: 'bad word', raw: 'x\ny' });
    expect(text).to.equal('a\n  server  \n');
    expect(writer.violations.map(({ template, line, tag, reason }) => ({ template, line, tag, reason }))).to.deep.equal([
      { template: 'templates.haproxyConfig', line: 2, tag: '{{name}}', reason: 'contains " "' },
      { template: 'templates.haproxyConfig', line: 2, tag: '{{{raw}}}', reason: 'contains U+000A' },
    ]);
  });

  it('re-renders a reused item when a root value it read changes', () => {
    const writer = new SafeWriter(new AccessTracker());
    const template = '{{#items}}\n{{name}} {{base}}\n{{/items}}\n';
    const items = frozen([{ name: 'a' }, { name: 'b' }]);
    expect(render(writer, template, { items, base: '/x' })).to.equal('a /x\nb /x\n');
    expect(render(writer, template, { items, base: '/x' })).to.equal('a /x\nb /x\n');
    expect(render(writer, template, { items, base: '/y' })).to.equal('a /y\nb /y\n');
  });

  it('re-renders a list replayed whole when a root value its replayed items read changes, or a name none answered appears', () => {
    const writer = new SafeWriter(new AccessTracker());
    const template = '{{#items}}\n{{name}} {{base}}{{extra}} {{base}}\n{{/items}}\n';
    // One parse: output is kept per compiled template, so each render must be of the same one.
    const tokens = new Mustache.Writer().parse(template);
    const once = (view: unknown) => writer.renderFile('templates.haproxyConfig', tokens, view, {}, template).text;
    const items = frozen([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    // First sight keeps the items; the second render keeps the list, made of replayed items; the third replays the list.
    for (let run = 0; run < 3; run++) expect(once({ items, base: '/x' })).to.equal('a /x /x\nb /x /x\nc /x /x\n');
    expect(once({ items, base: '/y' })).to.equal('a /y /y\nb /y /y\nc /y /y\n');
    expect(once({ items, base: '/y' })).to.equal('a /y /y\nb /y /y\nc /y /y\n');
    expect(once({ items, base: '/y', extra: '.v2' })).to.equal('a /y.v2 /y\nb /y.v2 /y\nc /y.v2 /y\n');
    // A list replaced around the same items: they are replayed against this render's root.
    const replaced = frozen([items[0]!, items[2]!]);
    expect(once({ items: replaced, base: '/z', extra: '.v2' })).to.equal('a /z.v2 /z\nc /z.v2 /z\n');
    expect(once({ items: replaced, base: '/z' })).to.equal('a /z /z\nc /z /z\n');
  });

  it('re-renders every list whose replayed items read a root value that changed, where one list checked that value for all', () => {
    const writer = new SafeWriter(new AccessTracker());
    const template = '{{#groups}}{{#items}}\n{{name}} {{base}}\n{{/items}}{{/groups}}\n';
    const tokens = new Mustache.Writer().parse(template);
    const groups = [{ items: frozen([{ name: 'a' }, { name: 'b' }]) }, { items: frozen([{ name: 'c' }]) }];
    const once = (base: string) => writer.renderFile('templates.haproxyConfig', tokens, { groups, base }, {}, template).text;
    for (let run = 0; run < 3; run++) expect(once('/x')).to.equal('a /x\nb /x\nc /x\n');
    expect(once('/y')).to.equal('a /y\nb /y\nc /y\n');
  });

  it('refuses "%" in a value of the configuration, admits it in a map file, and doubles it where the template asks', () => {
    const writer = new SafeWriter(new AccessTracker());
    const template = '  http-request set-header X-Tenant {{tenant}}\n';
    expect(render(writer, template, { tenant: '%PWN' })).to.equal('  http-request set-header X-Tenant \n');
    expect(writer.violations.map((v) => v.reason)).to.deep.equal(['contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})']);
    const map = '{{key}} x\n';
    expect(writer.renderFile('templates.maps.a.map', new Mustache.Writer().parse(map), { key: '/a%20b' }, {}, map, { percent: 'admit' }).text).to.equal('/a%20b x\n');
    const asked = '  http-request set-header X-Tenant {{#escape.logFormat}}{{tenant}} {{{note}}}{{/escape.logFormat}} {{other}}\n';
    writer.violations = [];
    expect(render(writer, asked, { tenant: '50%', note: '"100% sure"', other: 'x', escape: { logFormat: LOG_FORMAT } })).to.equal('  http-request set-header X-Tenant 50%% "100%% sure" x\n');
    expect(writer.violations).to.deep.equal([]);
  });

  it('never replays in a configuration what it rendered where "%" was admitted', () => {
    const writer = new SafeWriter(new AccessTracker());
    const template = '{{#items}}\n{{key}}\n{{/items}}\n';
    const items = frozen([{ key: '/a%20b' }]);
    const tokens = new Mustache.Writer().parse(template);
    const asMap = () => writer.renderFile('templates.partials.keys', tokens, { items }, {}, template, { percent: 'admit' }).text;
    const asConfig = () => writer.renderFile('templates.partials.keys', tokens, { items }, {}, template).text;
    expect(asMap()).to.equal('/a%20b\n');
    expect(asMap()).to.equal('/a%20b\n');
    expect(asConfig()).to.equal('\n');
    expect(writer.violations).to.have.length(1);
  });

  it('writes each value inside escape.quoted as one double-quoted word, escaping what HAProxy reads inside double quotes', () => {
    const writer = new SafeWriter(new AccessTracker());
    const escape = { logFormat: LOG_FORMAT, quoted: QUOTED };
    const template = '  http-request set-header X-Note {{#escape.quoted}}{{note}}{{/escape.quoted}} {{other}}\n';
    expect(render(writer, template, { note: 'a "b" \\ $HOME ${X} # c', other: 'x', escape })).to.equal('  http-request set-header X-Note "a \\"b\\" \\\\ \\$HOME \\${X} # c" x\n');
    expect(writer.violations).to.deep.equal([]);
    expect(render(writer, template, { note: 'two\nlines', other: 'x', escape })).to.equal('  http-request set-header X-Note  x\n');
    expect(render(writer, template, { note: '50%', other: 'x', escape })).to.equal('  http-request set-header X-Note  x\n');
    expect(writer.violations.map((v) => v.reason)).to.deep.equal([
      'contains U+000A',
      'contains "%", which starts a log-format variable in HAProxy (a template writes it as "%%" inside {{#escape.logFormat}})',
    ]);
    const both = '  http-request set-header X-Note {{#escape.logFormat}}{{#escape.quoted}}{{note}}{{/escape.quoted}}{{/escape.logFormat}}\n';
    expect(render(writer, both, { note: '50% "off"', escape })).to.equal('  http-request set-header X-Note "50%% \\"off\\""\n');
  });

  it('never replays a fragment kept inside escape.quoted outside it, nor the other way round', () => {
    const writer = new SafeWriter(new AccessTracker());
    const escape = { quoted: QUOTED };
    const items = frozen([{ name: 'a b' }]);
    const inside = '{{#escape.quoted}}{{#items}}\n{{name}}\n{{/items}}{{/escape.quoted}}\n';
    const outside = '{{#items}}\n{{name}}\n{{/items}}\n';
    expect(render(writer, inside, { items, escape })).to.equal('"a b"\n');
    expect(render(writer, outside, { items, escape })).to.equal('\n');
    expect(writer.violations.map((v) => v.reason)).to.deep.equal(['contains " "']);
  });
});
