import { expect } from 'chai';
import { runtimeOnly } from '../../../lib/deploy/runtime-only.ts';
import type { RenderedFiles } from '../../../lib/pipeline/model.ts';

function files(config: string, extra: Partial<Omit<RenderedFiles, 'config'>> = {}): RenderedFiles {
  return { config, maps: {}, certificates: {}, files: {}, ...extra };
}

const config = (...servers: string[]): string =>
  [
    'global',
    '  maxconn 100',
    'defaults',
    '  mode http',
    'frontend in',
    '  bind :80',
    '  use_backend %[req.hdr(host),map(maps/host.map)]',
    'backend web',
    ...servers.map((s) => `  ${s}`),
    '',
  ].join('\n');

const last = files(config('server a 10.0.0.1:80'), { maps: { 'host.map': 'a.example.com web\n' }, certificates: { 'shop.pem': 'PEM 1' } });

describe('runtimeOnly', () => {
  it('holds for a server added to an existing backend', () => {
    expect(runtimeOnly(last, { ...last, config: config('server a 10.0.0.1:80', 'server b 10.0.0.2:80') })).to.equal(true);
  });

  it('holds for changed map entries and a changed certificate content', () => {
    expect(runtimeOnly(last, { ...last, maps: { 'host.map': 'a.example.com web\nb.example.com web\n' }, certificates: { 'shop.pem': 'PEM 2' } })).to.equal(true);
  });

  it('holds when nothing the runtime sees changed (a comment)', () => {
    expect(runtimeOnly(last, { ...last, config: `# again\n${last.config}` })).to.equal(true);
  });

  it('does not hold for a new backend, a new map file or a new certificate', () => {
    expect(runtimeOnly(last, { ...last, config: `${last.config}backend other\n  server c 10.0.0.3:80\n` })).to.equal(false);
    expect(runtimeOnly(last, { ...last, maps: { ...last.maps, 'path.map': '/ web\n' } })).to.equal(false);
    expect(runtimeOnly(last, { ...last, certificates: { ...last.certificates, 'other.pem': 'PEM' } })).to.equal(false);
  });

  it('does not hold when the target may turn one of its operations into a reload', () => {
    const maps = { 'host.map': 'a.example.com web\nb.example.com web\n' };
    expect(runtimeOnly(last, { ...last, maps }, { mayReload: (operation) => operation.type === 'updateMap' })).to.equal(false);
    expect(runtimeOnly(last, { ...last, config: config('server a 10.0.0.1:80', 'server b 10.0.0.2:80') }, { mayReload: (operation) => operation.type === 'updateMap' })).to.equal(true);
  });
});
