import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyBinary } from '../../../lib/haproxy/check.ts';
import { Validator, type ValidationInput } from '../../../lib/haproxy/validator.ts';
import { contentHash } from '../../../lib/pipeline/content-hash.ts';
import type { LineOrigin, RenderedFiles, ValidationVerdict } from '../../../lib/pipeline/model.ts';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../support/tls-fixture.ts';

const messageOf = (verdict: ValidationVerdict) => (verdict.status === 'valid' ? '' : verdict.message);

const dirs = { mapsDir: 'maps', certificatesDir: 'ssl', generalDir: 'general' };

function input(config: string, maps: Record<string, string> = {}, origins: LineOrigin[] = []): ValidationInput {
  const files: RenderedFiles = { config, maps, certificates: {}, files: {} };
  return { hash: contentHash(files), files, origins: new Map([['haproxy.cfg', origins]]) };
}

const valid = (base: string) =>
  [
    'global',
    `  default-path origin ${base}`,
    'defaults',
    '  mode http',
    '  timeout client 1s',
    '  timeout server 1s',
    '  timeout connect 1s',
    'frontend f',
    '  bind 127.0.0.1:18081',
    // Files in http-request rules resolve against default-path while parsing; use_backend
    // expressions are parsed later, outside it, so templates look maps up in variables.
    '  http-request set-var(txn.backend) req.hdr(host),map(maps/host.map,b)',
    '  use_backend %[var(txn.backend)]',
    'backend b',
    '  server s 127.0.0.1:9',
    '',
  ].join('\n');

/** A haproxy wrapper that logs each run's start and end, to see caching and overlap. */
async function countingBinary(): Promise<{ binary: string; runs: () => Promise<string[]> }> {
  const dir = await mkdtemp(join(tmpdir(), 'validator-bin-'));
  const log = join(dir, 'runs.log');
  const binary = join(dir, 'haproxy');
  await writeFile(log, '');
  await writeFile(binary, `#!/bin/sh\necho start >> ${log}\n${haproxyBinary()} "$@"\ncode=$?\necho end >> ${log}\nexit $code\n`);
  await chmod(binary, 0o755);
  return { binary, runs: async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean) };
}

describe('validator', () => {
  it('accepts a valid configuration, reading its files from a private copy, not from the base directory', async () => {
    // The base directory has no maps/host.map: only the candidate's own copy can make this valid.
    const base = await mkdtemp(join(tmpdir(), 'live-'));
    const validator = new Validator({ allowDirectives: [], dirs });
    expect(await validator.validate(input(valid(base), { 'host.map': 'a.example.com b\n' }))).to.deep.equal({ status: 'valid' });
  });

  it('reads files named by an absolute path under the base directory from its private copy too', async () => {
    const base = await mkdtemp(join(tmpdir(), 'validator-base-'));
    const absolute = valid(base).replace('map(maps/host.map,b)', `map(${base}/maps/host.map,b)`);
    const validator = new Validator({ allowDirectives: [], dirs });
    expect(await validator.validate(input(absolute, { 'host.map': 'a b\n' }))).to.deep.equal({ status: 'valid' });
    // The copy, not the base directory: a map only the base directory had would not make it valid.
    await writeFile(join(base, 'other.map'), 'x b\n');
    const elsewhere = absolute.replace(`${base}/maps/host.map`, `${base}/other.map`);
    const verdict = await validator.validate(input(elsewhere, { 'host.map': 'a b\n' }));
    expect(verdict.status).to.equal('invalid');
    expect(verdict.status === 'invalid' && verdict.message).to.match(/other\.map/);
  });

  it('inserts a base directory into a configuration that has none', async () => {
    const validator = new Validator({ allowDirectives: [], dirs });
    const config = valid('/nonexistent').replace('  default-path origin /nonexistent\n', '');
    expect(await validator.validate(input(config, { 'host.map': '' }))).to.deep.equal({ status: 'valid' });
  });

  it('explains a rejection with HAProxy message, rendered line, template line and objects', async () => {
    const validator = new Validator({ allowDirectives: [], dirs });
    const config = valid('/x').replace('  server s 127.0.0.1:9', '  server s 127.0.0.1:9 chek');
    const origins = config.split('\n').map((_, i): LineOrigin => ({ template: 'templates.haproxyConfig', line: i + 3, objects: i === 12 ? ['Ingress default/web'] : [], sources: [] }));
    const verdict = await validator.validate(input(config, { 'host.map': '' }, origins));
    expect(verdict.status).to.equal('invalid');
    const message = messageOf(verdict);
    expect(message).to.match(/^haproxy\.cfg:13: .*'chek'/m);
    expect(message).to.include('  rendered: "server s 127.0.0.1:9 chek"');
    expect(message).to.include('  from templates.haproxyConfig line 15, values of Ingress default/web');
    expect(message).to.not.include('haproxy-template-ic-validate-');
  });

  it('maps line numbers back when it had to insert the base directory', async () => {
    const validator = new Validator({ allowDirectives: [], dirs });
    const config = valid('/x').replace('  default-path origin /x\n', '').replace('  mode http', '  mode httpx');
    const verdict = await validator.validate(input(config, { 'host.map': '' }));
    expect(messageOf(verdict)).to.match(/^haproxy\.cfg:3: /m);
    expect(messageOf(verdict)).to.include('rendered: "mode httpx"');
  });

  it('refuses guarded directives before running haproxy, unless the configuration allows them', async () => {
    const counting = await countingBinary();
    const config = valid('/x').replace('global', 'global\n  lua-prepend-path lib/?.lua');
    const strict = new Validator({ allowDirectives: [], dirs, binary: counting.binary });
    const verdict = await strict.validate(input(config, { 'host.map': '' }));
    expect(messageOf(verdict)).to.match(/^haproxy\.cfg:2: lua-prepend-path changes where Lua code is loaded from: "lua-prepend-path lib\/\?\.lua"; allowDirectives does not allow it$/m);
    expect(await counting.runs()).to.deep.equal([]);
    const permissive = new Validator({ allowDirectives: ['lua-prepend-path'], dirs, binary: counting.binary });
    expect(await permissive.validate(input(config, { 'host.map': '' }))).to.deep.equal({ status: 'valid' });
    expect(await counting.runs()).to.deep.equal(['start', 'end']);
  });

  it('runs haproxy once per content hash and one at a time', async () => {
    const counting = await countingBinary();
    const validator = new Validator({ allowDirectives: [], dirs, binary: counting.binary });
    const a = input(valid('/a'), { 'host.map': '' });
    const b = input(valid('/b'), { 'host.map': 'x y\n' });
    const verdicts = await Promise.all([validator.validate(a), validator.validate(b), validator.validate(a)]);
    expect(verdicts).to.deep.equal([{ status: 'valid' }, { status: 'valid' }, { status: 'valid' }]);
    // Two distinct contents: two runs, never overlapping.
    expect(await counting.runs()).to.deep.equal(['start', 'end', 'start', 'end']);
  });

  it('says it could not judge, never passing, when haproxy cannot run', async () => {
    const validator = new Validator({ allowDirectives: [], dirs, binary: '/nonexistent/haproxy' });
    const verdict = await validator.validate(input(valid('/a'), { 'host.map': '' }));
    expect(verdict.status).to.equal('unavailable');
    expect(messageOf(verdict)).to.include('/nonexistent/haproxy not found');
  });

  it('says it could not judge when the copy cannot be written, and judges the same content once it can', async () => {
    // A temporary folder that cannot take the copy (here: its path runs through a file, as good as a full disk).
    const root = await mkdtemp(join(tmpdir(), 'validator-root-'));
    const blocked = join(root, 'tmp');
    await writeFile(blocked, 'a file, not a folder');
    const validator = new Validator({ allowDirectives: [], dirs, tmpRoot: blocked });
    const candidate = input(valid('/a'), { 'host.map': '' });
    const first = await validator.validate(candidate);
    expect(first.status).to.equal('unavailable');
    expect(messageOf(first)).to.match(/ENOTDIR/);
    await rm(blocked);
    await mkdir(blocked);
    expect(await validator.validate(candidate)).to.deep.equal({ status: 'valid' });
  });

  it('names the innermost place of a nested alert: the crt-list line, not the bind line', async () => {
    const validator = new Validator({ allowDirectives: [], dirs });
    const config = valid('/x').replace('  bind 127.0.0.1:18081', '  bind 127.0.0.1:18081\n  bind 127.0.0.1:18443 ssl crt-list general/crt-list.txt');
    const files: RenderedFiles = {
      config,
      maps: { 'host.map': '' },
      certificates: { 'a.pem': SELF_SIGNED_CERT + SELF_SIGNED_KEY },
      files: { 'crt-list.txt': `ssl/a.pem a.example.com\nssl/a.pem ${Array.from({ length: 2100 }, (_, i) => `h${i}.example.com`).join(' ')}\n` },
    };
    const verdict = await validator.validate({ hash: contentHash(files), files, origins: new Map() });
    if (verdict.status !== 'invalid') throw new Error(`expected invalid, got ${verdict.status}`);
    expect(verdict.alerts.map((alert) => alert.locations)).to.deep.equal([
      [
        { file: 'haproxy.cfg', line: 10 },
        { file: 'general/crt-list.txt', line: 2 },
      ],
    ]);
    expect(verdict.alerts[0]!.detail).to.match(/^too many args/);
    expect(messageOf(verdict)).to.match(/^general\/crt-list\.txt:2: too many args/);
  });
});
