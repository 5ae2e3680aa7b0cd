import { expect } from 'chai';
import { compilePath, withoutPath } from '../../../lib/config/json-path.ts';
import type { KubeObject } from '../../../lib/pipeline/model.ts';

describe('compilePath', () => {
  const forms: [string, (string | number)[]][] = [
    ['metadata.namespace', ['metadata', 'namespace']],
    ["metadata.labels['kubernetes.io/service-name']", ['metadata', 'labels', 'kubernetes.io/service-name']],
    ['metadata.labels["a.b/c"]', ['metadata', 'labels', 'a.b/c']],
    ['spec.ports[0].name', ['spec', 'ports', 0, 'name']],
    ['$.metadata.name', ['metadata', 'name']],
    ['.metadata.name', ['metadata', 'name']],
    ["$['metadata']['name']", ['metadata', 'name']],
    ["a['it\\'s']", ['a', "it's"]],
    ['spec.rules[12]', ['spec', 'rules', 12]],
  ];
  for (const [source, segments] of forms) {
    it(`splits ${source}`, () => {
      const path = compilePath(source);
      expect(path.segments).to.deep.equal(segments);
      expect(path.source).to.equal(source);
    });
  }

  const errors: [string, string][] = [
    ["metadata.labels['kubernetes.io/service-name'", 'unclosed bracket at 16'],
    ['a[0', 'unclosed bracket at 2'],
    ["a['b", 'unclosed quote at 3'],
    ['spec.rules[*]', 'wildcards are not supported at 11'],
    ['spec.*', 'wildcards are not supported at 6'],
    ['spec.rules[?(@.host)]', 'filters are not supported at 11'],
    ['spec..name', 'recursive descent is not supported at 5'],
    ['spec.ports[0:2]', 'slices are not supported at 11'],
    ['spec.ports[:2]', 'slices are not supported at 11'],
    ['spec.ports[0,1]', 'unions are not supported at 11'],
    ['spec.ports[-1]', 'negative indexes are not supported at 11'],
    ['a[x]', 'expected an index or a quoted key, got "x" at 3'],
    ['a[0x]', 'expected "]", got "x" at 4'],
    ['metadata.', 'expected a field name at 10'],
    ['a.b c', 'unexpected " " at 4'],
    ['$metadata', 'unexpected "m" at 2'],
    ['', 'empty path'],
    ['$', 'empty path'],
  ];
  for (const [source, message] of errors) {
    it(`rejects ${JSON.stringify(source)} with "${message}"`, () => {
      expect(() => compilePath(source)).to.throw(Error, message);
    });
  }

  describe('get', () => {
    const object = {
      metadata: { name: 'web', labels: { 'kubernetes.io/service-name': 'svc' } },
      spec: { ports: [{ name: 'http', port: 80, tls: false }], empty: null, nested: { a: 1 } },
    };

    it('returns strings as they are and stringifies numbers and booleans', () => {
      expect(compilePath('metadata.name').get(object)).to.equal('web');
      expect(compilePath("metadata.labels['kubernetes.io/service-name']").get(object)).to.equal('svc');
      expect(compilePath('spec.ports[0].port').get(object)).to.equal('80');
      expect(compilePath('spec.ports[0].tls').get(object)).to.equal('false');
    });

    it('returns undefined for absent fields, nulls and non-scalars', () => {
      for (const source of ['metadata.namespace', 'spec.ports[1].name', 'spec.empty', 'spec.nested', 'spec.ports', 'a.b.c']) {
        expect(compilePath(source).get(object), source).to.be.undefined;
      }
      expect(compilePath('a').get(undefined)).to.be.undefined;
      expect(compilePath('a').get('text')).to.be.undefined;
    });

    it('indexes arrays only and reads own properties only', () => {
      expect(compilePath('spec[0]').get({ spec: { 0: 'x' } })).to.be.undefined;
      expect(compilePath('spec.ports.length').get(object)).to.be.undefined;
      expect(compilePath('metadata.constructor.name').get(object)).to.be.undefined;
    });
  });
});

describe('withoutPath', () => {
  const annotation = "metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']";
  const object: KubeObject = {
    metadata: {
      name: 'web',
      managedFields: [{ manager: 'kubectl' }],
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'yes' },
    },
    spec: { rules: [{ host: 'a' }, { host: 'b' }] },
  };
  const snapshot = structuredClone(object);

  it('drops the field, copying only along the path', () => {
    const result = withoutPath(object, compilePath('metadata.managedFields'));
    expect(result).to.deep.equal({ ...snapshot, metadata: { name: 'web', annotations: snapshot.metadata.annotations } });
    expect(result['spec']).to.equal(object['spec']);
    expect(result.metadata.annotations).to.equal(object.metadata.annotations);
    expect(object).to.deep.equal(snapshot);
  });

  it('drops a key with dots and slashes', () => {
    const result = withoutPath(object, compilePath(annotation));
    expect(result.metadata.annotations).to.deep.equal({ keep: 'yes' });
    expect(result.metadata['managedFields']).to.equal(object.metadata['managedFields']);
    expect(object).to.deep.equal(snapshot);
  });

  it('removes an array element or a field inside one', () => {
    expect(withoutPath(object, compilePath('spec.rules[0]'))['spec']).to.deep.equal({ rules: [{ host: 'b' }] });
    expect(withoutPath(object, compilePath('spec.rules[1].host'))['spec']).to.deep.equal({ rules: [{ host: 'a' }, {}] });
    expect(object).to.deep.equal(snapshot);
  });

  it('returns the very same object when the path is absent', () => {
    for (const source of ['metadata.labels', 'metadata.name.first', 'spec.rules[5]', 'spec.rules.host', 'spec[0]', 'status.x']) {
      expect(withoutPath(object, compilePath(source)), source).to.equal(object);
    }
  });
});
