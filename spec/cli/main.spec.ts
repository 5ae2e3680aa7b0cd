import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../../streams/main.ts', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [entry, ...args], { encoding: 'utf8' });

describe('haproxy-template-ic command', () => {
  it('prints usage on stderr and exits 2 on misuse, naming what is wrong', () => {
    const none = run();
    expect(none.status).to.equal(2);
    expect(none.stderr).to.include('no command given').and.include('Usage: haproxy-template-ic <command>');
    const unknown = run('deploy-everything');
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.include('unknown command "deploy-everything"');
    const badOption = run('version', '--verbose');
    expect(badOption.status).to.equal(2);
    expect(badOption.stderr).to.include('--verbose');
    const missing = run('render', '--manifests', '.');
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.include('render: --out is required');
    const badUrl = run('local', '--manifests', '.', '--dataplane-url', 'ftp://a');
    expect(badUrl.status).to.equal(2);
    expect(badUrl.stderr).to.include('--dataplane-url must be an http:// or https:// URL');
    const lonely = run('local', '--manifests', '.', '--dataplane-user', 'admin');
    expect(lonely.status).to.equal(2);
    expect(lonely.stderr).to.include('need --dataplane-url');
    const badPort = run('local', '--manifests', '.', '--http-port', '99999');
    expect(badPort.status).to.equal(2);
    expect(badPort.stderr).to.include('--http-port must be a port number');
  });

  it('prints help on stdout and exits 0', () => {
    const help = run('--help');
    expect(help.status).to.equal(0);
    expect(help.stdout).to.include('Commands:').and.include('version');
  });

  it('prints the package version', () => {
    const version = run('version');
    expect(version.status).to.equal(0);
    expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+$/);
  });
});
