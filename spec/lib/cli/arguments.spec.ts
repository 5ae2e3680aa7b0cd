import { expect } from 'chai';
import { parseCommandLine, usage, UsageError, type CommandSpec } from '../../../lib/cli/arguments.ts';

const commands: CommandSpec[] = [
  {
    name: 'local',
    summary: 'Run against a folder of manifests.',
    options: {
      manifests: { type: 'string', description: 'Folder of manifests.', defaultText: 'examples/' },
      'dataplane-url': { type: 'string', multiple: true, description: 'A Data Plane API.' },
      once: { type: 'boolean', description: 'Deploy once and exit.' },
    },
  },
  { name: 'version', summary: 'Print the version.', options: {} },
];

describe('command line', () => {
  it('parses a command with its options', () => {
    const parsed = parseCommandLine(commands, ['local', '--manifests', 'm/', '--dataplane-url', 'http://a:5555', '--dataplane-url', 'http://b:5555', '--once']);
    expect(parsed).to.deep.equal({
      kind: 'run',
      command: 'local',
      values: { manifests: 'm/', 'dataplane-url': ['http://a:5555', 'http://b:5555'], once: true },
    });
  });

  it('rejects a missing or unknown command, an unknown option and a stray argument, naming each', () => {
    const failures: [string[], RegExp][] = [
      [[], /no command given/],
      [['deploy'], /unknown command "deploy"/],
      [['local', '--manifest', 'x'], /local: .*--manifest/],
      [['local', 'extra'], /local: .*extra/],
      [['local', '--manifests'], /local: .*--manifests/],
    ];
    for (const [argv, message] of failures) {
      expect(() => parseCommandLine(commands, argv), argv.join(' '))
        .to.throw(UsageError)
        .with.property('message')
        .that.matches(message);
    }
  });

  it('gives the overall and the per-command help', () => {
    const overall = parseCommandLine(commands, ['--help']);
    expect(overall).to.deep.equal({ kind: 'help', text: usage(commands) });
    expect(usage(commands)).to.include('local    Run against a folder of manifests.');
    const local = parseCommandLine(commands, ['local', '--help']);
    expect(local.kind === 'help' && local.text)
      .to.include('--manifests <value>')
      .and.include('(default examples/)')
      .and.include('--dataplane-url <value, repeatable>');
  });
});
