import { expect } from 'chai';
import { compileTemplate, TemplateError } from '../../../lib/config/template.ts';

describe('compileTemplate', () => {
  it('names the template and the line of an unclosed section', () => {
    const source = 'backend a\n  {{#servers}}\n  server {{name}}\n';
    expect(() => compileTemplate('templates.maps.host.map', source))
      .to.throw(TemplateError)
      .with.property('message', 'templates.maps.host.map: line 2: unclosed section "servers"');
  });

  it('names the line of a mismatched closing tag and of an unclosed tag', () => {
    expect(() => compileTemplate('t', 'a\nb\n{{#x}}\n{{/y}}')).to.throw('t: line 3: unclosed section "x"');
    expect(() => compileTemplate('t', '{{#x}}\n{{/x}}\n{{#x}}\nb')).to.throw('t: line 3: unclosed section "x"');
    expect(() => compileTemplate('t', 'a\n{{b')).to.throw('t: line 2: unclosed tag');
  });

  it('lists the partials a template uses, nested ones included', () => {
    const template = compileTemplate('t', '{{> globals}}\n{{#backends}}{{> backend}}{{/backends}}{{> globals}}');
    expect(template.partials).to.deep.equal(['backend', 'globals']);
  });
});
