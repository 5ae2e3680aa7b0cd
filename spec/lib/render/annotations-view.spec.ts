import { expect } from 'chai';
import { loadControllerConfig } from '../../../lib/config/load.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';
import { createRenderer } from '../../../lib/render/renderer.ts';
import { routingViews } from '../../../lib/routing-view/routing-view.ts';
import { buildStores } from '../../../lib/store/build-stores.ts';

/**
 * The annotations view: every object's annotations reachable by custom
 * templates, which Mustache's dotted names cannot reach in
 * metadata.annotations, through the same checks as every other value.
 */

function renderIngresses(template: string, ingresses: readonly KubeObject[]) {
  const text = `
watchedResources:
  ingresses:
    apiVersion: networking.k8s.io/v1
    kind: Ingress
templates:
  haproxyConfig: |
${template
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
`;
  const loaded = loadControllerConfig(text);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  const { config } = loaded;
  return createRenderer(config, routingViews)({ stores: buildStores(config.watchedResources, new Map([['ingresses', ingresses]]), config.ignoreFields) });
}

function annotated(name: string, annotations: Record<string, string>): KubeObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: 'default', annotations }, spec: {} };
}

describe('the annotations view', () => {
  it('maps normalised names to values and lists every annotation by name, in name order', () => {
    const output = renderIngresses(
      [
        '{{#resources.ingresses}}',
        '# {{metadata.name}} timeout {{annotations.haproxy_org_timeout_server}} missing [{{annotations.absent}}]',
        '{{#annotationList}}',
        '# {{name}} = {{value}}',
        '{{/annotationList}}',
        '{{/resources.ingresses}}',
      ].join('\n'),
      [
        annotated('web', { 'haproxy.org/timeout-server': '5s', 'example.com/team': 'shop', 'a.b': 'first', 'a-b': 'second' }),
        { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'bare', namespace: 'default' }, spec: {} },
      ],
    );
    expect(output.excluded).to.deep.equal([]);
    expect(output.files.config).to.equal(
      ['# bare timeout  missing []', '# web timeout 5s missing []', '# a-b = second', '# a.b = first', '# example.com/team = shop', '# haproxy.org/timeout-server = 5s', ''].join('\n'),
    );
    // Names normalising alike: the first in name order ("a-b" before "a.b") takes the key.
    expect(renderIngresses('{{#resources.ingresses}}\n# {{annotations.a_b}}\n{{/resources.ingresses}}', [annotated('web', { 'a.b': 'first', 'a-b': 'second' })]).files.config).to.equal(
      '# second\n',
    );
  });

  it('excludes an object whose annotation is unsafe where the template writes it, naming the annotation, and renders the rest', () => {
    const template = '{{#resources.ingresses}}\n  http-response set-header X-Team {{annotations.example_com_team}}\n{{/resources.ingresses}}';
    const output = renderIngresses(template, [annotated('good', { 'example.com/team': 'shop' }), annotated('evil', { 'example.com/team': 'x\n  lua-load /tmp/x.lua' })]);
    expect(output.files.config).to.equal('  http-response set-header X-Team shop\n');
    expect(output.excluded.map((problem) => `${problem.object} ${problem.field}`)).to.deep.equal(["Ingress default/evil metadata.annotations['example.com/team']"]);
    const listed = renderIngresses('{{#resources.ingresses}}{{#annotationList}}\n# {{name}} {{value}}\n{{/annotationList}}{{/resources.ingresses}}', [
      annotated('spaced', { note: 'two words' }),
      annotated('fine', { note: 'one' }),
    ]);
    expect(listed.files.config).to.equal('# note one\n');
    expect(listed.excluded.map((problem) => `${problem.object} ${problem.field}`)).to.deep.equal(["Ingress default/spaced metadata.annotations['note']"]);
  });

  it('writes an annotation with spaces and quotes as one word inside escape.quoted', () => {
    const output = renderIngresses('{{#resources.ingresses}}\n  http-response set-header X-Note {{#escape.quoted}}{{annotations.note}}{{/escape.quoted}}\n{{/resources.ingresses}}', [
      annotated('web', { note: 'say "hi" to $USER' }),
    ]);
    expect(output.excluded).to.deep.equal([]);
    expect(output.files.config).to.equal('  http-response set-header X-Note "say \\"hi\\" to \\$USER"\n');
  });
});
