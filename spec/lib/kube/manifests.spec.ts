import { expect } from 'chai';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseManifests, readManifests } from '../../../lib/kube/manifests.ts';

describe('manifests', () => {
  it('reads every document of every file, lists included, in file name order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    await mkdir(join(dir, 'nested'));
    await writeFile(
      join(dir, 'b.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n---\napiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: Secret, metadata: {name: s}}\n',
    );
    await writeFile(join(dir, 'nested', 'a.json'), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"x"}}');
    const read = await readManifests(dir);
    expect(read.errors).to.deep.equal([]);
    expect(read.manifests.map((m) => [m.source, m.object.kind, m.object.metadata.name])).to.deep.equal([
      ['b.yaml#1', 'Service', 'web'],
      ['b.yaml#3.items[0]', 'Secret', 's'],
      ['nested/a.json#1', 'ConfigMap', 'c'],
    ]);
  });

  it('names the file and document of anything that is not a Kubernetes object', () => {
    const read = parseManifests(
      'kind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {}\n---\n- a list\n---\napiVersion: v1\nkind: Service\nmetadata: {name: ok, namespace: 3}\n',
      'app.yaml',
    );
    expect(read.manifests).to.deep.equal([]);
    expect(read.errors).to.deep.equal([
      'app.yaml#1: has no apiVersion',
      'app.yaml#2: has no metadata.name',
      'app.yaml#3: is not a mapping',
      'app.yaml#4: has a metadata.namespace that is not a string',
    ]);
  });

  it('reports a YAML syntax error with the file and position', () => {
    const read = parseManifests('apiVersion: v1\nkind: [Service\n', 'broken.yaml');
    expect(read.errors).to.have.length(1);
    expect(read.errors[0]).to.match(/^broken\.yaml: .*\(\d+:\d+\)/);
  });

  it('takes a Secret as the API server stores it, and names the document and key of one it would refuse', () => {
    const read = parseManifests(
      'apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata:\n  k: |\n    YWJj\n    ZA==\nstringData: {s: text}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\ndata: {k: "not base64!"}\n',
      'secrets.yaml',
    );
    expect(read.manifests.map((m) => m.object['data'])).to.deep.equal([{ k: 'YWJjZA==', s: 'dGV4dA==' }]);
    expect(read.manifests[0]!.object['stringData']).to.equal(undefined);
    expect(read.errors).to.deep.equal(['secrets.yaml#2: Secret b: data[k] is not valid base64']);
  });
});
