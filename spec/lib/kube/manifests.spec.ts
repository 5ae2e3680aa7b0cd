import { expect } from 'chai';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ManifestFolder, parseManifests, readManifests } from '../../../lib/kube/manifests.ts';

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

  it('reads only .yaml, .yml and .json files, as kubectl does: backups, swap and temporary files are not manifests', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    for (const file of ['a.yaml', 'b.YML', 'c.json', 'a.yaml~', '.a.yaml.swp', 'sedAbC123', 'notes.txt'])
      await writeFile(join(dir, file), service(file.replace(/[^a-z]/gi, '').toLowerCase()));
    const read = await readManifests(dir);
    expect(read.manifests.map((m) => m.source)).to.deep.equal(['a.yaml#1', 'b.YML#1', 'c.json#1']);
  });

  it('follows symlinked files and folders, reading each file once however many links lead to it, loops included', async () => {
    const root = await mkdtemp(join(tmpdir(), 'manifests-'));
    const dir = join(root, 'm');
    const outside = join(root, 'outside');
    await mkdir(join(outside, 'nested'), { recursive: true });
    await mkdir(dir);
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    await writeFile(join(outside, 'linked.yaml'), service('linked'));
    await writeFile(join(outside, 'nested', 'inner.yaml'), service('inner'));
    await writeFile(join(dir, 'own.yaml'), service('own'));
    await symlink(join(outside, 'linked.yaml'), join(dir, 'linked.yaml'));
    await symlink(join(outside, 'nested'), join(dir, 'nested'));
    // A loop back to the folder, a second link to a file already read, and a dangling link.
    await symlink(dir, join(dir, 'loop'));
    await symlink(join(dir, 'own.yaml'), join(dir, 'z-again.yaml'));
    await symlink(join(root, 'nowhere.yaml'), join(dir, 'dangling.yaml'));
    const read = await readManifests(dir);
    expect(read.errors).to.deep.equal([]);
    expect(read.manifests.map((m) => `${m.source} ${m.object.metadata.name}`)).to.deep.equal(['linked.yaml#1 linked', 'nested/inner.yaml#1 inner', 'own.yaml#1 own']);
  });

  it('parses again only the files whose content changed, and fingerprints the folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    await writeFile(join(dir, 'a.yaml'), service('a'));
    await writeFile(join(dir, 'b.yaml'), service('b'));
    const folder = new ManifestFolder(dir);
    const first = await folder.read();
    const same = await folder.read();
    expect(same.fingerprint).to.equal(first.fingerprint);
    expect(same.files.get('a.yaml')).to.equal(first.files.get('a.yaml'));
    await writeFile(join(dir, 'b.yaml'), service('b2'));
    const edited = await folder.read();
    expect(edited.fingerprint).to.not.equal(first.fingerprint);
    expect(edited.files.get('a.yaml')).to.equal(first.files.get('a.yaml'));
    expect(edited.files.get('b.yaml')!.manifests[0]!.object.metadata.name).to.equal('b2');
    await rm(join(dir, 'b.yaml'));
    const removed = await folder.read();
    expect([...removed.files.keys()]).to.deep.equal(['a.yaml']);
    expect(removed.fingerprint).to.not.equal(edited.fingerprint);
    await rm(dir, { recursive: true });
    await folder.read().then(
      () => expect.fail('a missing folder reads'),
      (error: NodeJS.ErrnoException) => expect(error.code).to.equal('ENOENT'),
    );
  });

  it('reads a file again only when its stat changed, or when it changed too recently for its stat to vouch for it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    await writeFile(join(dir, 'a.yaml'), service('a'));
    await writeFile(join(dir, 'b.yaml'), service('b'));
    const read: string[] = [];
    let now = Date.now();
    const folder = new ManifestFolder(dir, { now: () => now, readText: (path) => (read.push(basename(path)), readFile(path, 'utf8')) });
    await folder.read();
    expect(read).to.deep.equal(['a.yaml', 'b.yaml']);
    // Read at once again: both changed within the racy window of that read, so their stats cannot vouch yet.
    await folder.read();
    expect(read).to.have.length(4);
    // Long after they changed: a stat each, no read.
    now += 5_000;
    await folder.read();
    const again = await folder.read();
    expect(read).to.have.length(6);
    expect(again.files.get('a.yaml')!.manifests[0]!.object.metadata.name).to.equal('a');
    // A write changes the stat (ctime at least): read again, whatever its size.
    await writeFile(join(dir, 'b.yaml'), service('c'));
    const edited = await folder.read();
    expect(read.slice(6)).to.deep.equal(['b.yaml']);
    expect(edited.files.get('b.yaml')!.manifests[0]!.object.metadata.name).to.equal('c');
    await rm(dir, { recursive: true });
  });
});
