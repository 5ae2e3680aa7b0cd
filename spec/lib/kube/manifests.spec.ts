import { expect } from 'chai';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { ManifestFolder, parseManifests, readManifests, type FolderRead } from '../../../lib/kube/manifests.ts';

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
  it('reads only the files a watch named: a file gone is dropped, a new one takes its place in folder order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    await mkdir(join(dir, 'a'));
    await writeFile(join(dir, 'a.yaml'), service('top'));
    await writeFile(join(dir, 'b.yaml'), service('b'));
    const read: string[] = [];
    const folder = new ManifestFolder(dir, { readText: (path) => (read.push(relative(dir, path)), readFile(path, 'utf8')) });
    await folder.read();
    read.length = 0;
    await writeFile(join(dir, 'a', 'x.yaml'), service('nested'));
    await writeFile(join(dir, 'b.yaml'), service('b2'));
    await rm(join(dir, 'a.yaml'));
    const named = await folder.read({ paths: [join(dir, 'a', 'x.yaml'), join(dir, 'b.yaml'), join(dir, 'a.yaml')], quick: false });
    expect(read).to.deep.equal(['a/x.yaml', 'b.yaml']);
    // The order a whole read gives: folder a's files before a.yaml's place, as filesUnder walks them.
    expect([...named.files.keys()]).to.deep.equal(['a/x.yaml', 'b.yaml']);
    expect(named.files.get('b.yaml')!.manifests[0]!.object.metadata.name).to.equal('b2');
    const whole = await folder.read();
    expect([...whole.files.keys()]).to.deep.equal([...named.files.keys()]);
    expect(whole.fingerprint).to.equal(named.fingerprint);
    await rm(dir, { recursive: true });
  });

  it('reads the whole folder when a named path is a folder or a link, or no whole read came first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    await writeFile(join(dir, 'a.yaml'), service('a'));
    const read: string[] = [];
    const folder = new ManifestFolder(dir, { readText: (path) => (read.push(relative(dir, path)), readFile(path, 'utf8')) });
    await folder.read({ paths: [join(dir, 'a.yaml')], quick: true });
    expect(read).to.deep.equal(['a.yaml']);
    await mkdir(join(dir, 'more'));
    await writeFile(join(dir, 'more', 'm.yaml'), service('m'));
    const afterFolder = await folder.read({ paths: [join(dir, 'more')], quick: false });
    expect([...afterFolder.files.keys()]).to.deep.equal(['a.yaml', 'more/m.yaml']);
    await symlink(join(dir, 'more', 'm.yaml'), join(dir, 'link.yaml'));
    // Read whole: the file is named by the first way to it.
    const afterLink = await folder.read({ paths: [join(dir, 'link.yaml')], quick: false });
    expect([...afterLink.files.keys()]).to.deep.equal(['a.yaml', 'link.yaml']);
    // A folder with a link names files as a whole read does: a quick read of it takes nothing.
    await writeFile(join(dir, 'c.yaml'), service('c'));
    const quick = await folder.read({ paths: [join(dir, 'c.yaml')], quick: true });
    expect([...quick.files.keys()]).to.deep.equal(['a.yaml', 'link.yaml']);
    await rm(dir, { recursive: true });
  });

  it('takes in a quick read only files that look whole, leaving the rest as they were for the settled read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifests-'));
    const service = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}}\n`;
    const path = (name: string) => join(dir, name);
    await writeFile(path('two.yaml'), `${service('one')}---\n${service('two')}`);
    await writeFile(path('gone.yaml'), service('gone'));
    const folder = new ManifestFolder(dir);
    const first = await folder.read();
    const names = (read: FolderRead, file: string) => read.files.get(file)?.manifests.map((m) => m.object.metadata.name);
    // Emptied for a write in place, moved away by an editor's save, cut mid-line, not parsing: each stays as it was.
    await writeFile(path('two.yaml'), '');
    await rm(path('gone.yaml'));
    await writeFile(path('cut.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: cu');
    await writeFile(path('broken.yaml'), 'apiVersion: v1\nkind: [\n');
    const quick = await folder.read({ paths: ['two.yaml', 'gone.yaml', 'cut.yaml', 'broken.yaml'].map(path), quick: true });
    expect([...quick.files.keys()]).to.deep.equal(['gone.yaml', 'two.yaml']);
    expect(names(quick, 'two.yaml')).to.deep.equal(['one', 'two']);
    expect(quick.fingerprint).to.equal(first.fingerprint);
    // Whole: a new file, an edit that drops an object (a file replaced is whole), a JSON document (whole when it
    // parses, final newline or not).
    await writeFile(path('new.yaml'), service('new'));
    await writeFile(path('two.yaml'), service('one'));
    await writeFile(path('doc.json'), '{"apiVersion":"v1","kind":"Service","metadata":{"name":"json"}}');
    const taken = await folder.read({ paths: ['new.yaml', 'two.yaml', 'doc.json'].map(path), quick: true });
    expect([...taken.files.keys()]).to.deep.equal(['doc.json', 'gone.yaml', 'new.yaml', 'two.yaml']);
    expect(names(taken, 'two.yaml')).to.deep.equal(['one']);
    // The settled read takes what is there, whatever it looks like.
    await writeFile(path('two.yaml'), '');
    const settled = await folder.read({ paths: ['two.yaml', 'gone.yaml', 'cut.yaml', 'broken.yaml'].map(path), quick: false });
    expect([...settled.files.keys()]).to.deep.equal(['broken.yaml', 'cut.yaml', 'doc.json', 'new.yaml', 'two.yaml']);
    expect(names(settled, 'two.yaml')).to.deep.equal([]);
    expect(settled.files.get('broken.yaml')!.errors).to.have.length(1);
    await rm(dir, { recursive: true });
  });
});
