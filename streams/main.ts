#!/usr/bin/env node
import { parseCommandLine, usage, UsageError, type CommandSpec } from '../lib/cli/arguments.ts';
import { processOutput } from '../lib/cli/output.ts';
import { packageVersion } from '../lib/cli/package-root.ts';
import { renderCommand } from '../lib/cli/render-command.ts';
import { validateCommand } from '../lib/cli/validate-command.ts';

/** The composition root: parses the command line and runs one command. */

const configOption = {
  type: 'string',
  description: 'The controller configuration (YAML).',
  defaultText: 'the shipped templates/config.yaml',
} as const;

const commands: readonly CommandSpec[] = [
  {
    name: 'render',
    summary: 'Render Kubernetes manifests into haproxy.cfg, maps, certificates and files.',
    options: {
      manifests: { type: 'string', description: 'A directory of Kubernetes YAML manifests (every file, multi-document).' },
      out: { type: 'string', description: 'The directory to write into; it is also the base directory of the render.' },
      config: configOption,
    },
  },
  {
    name: 'validate',
    summary: "Run the configuration's validationTests and print a table of results.",
    options: { config: configOption },
  },
  { name: 'version', summary: 'Print the version and exit.', options: {} },
];

function required(command: string, values: Record<string, unknown>, names: readonly string[]): void {
  for (const name of names) {
    if (typeof values[name] !== 'string' || values[name] === '') throw new UsageError(`${command}: --${name} is required`);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const invocation = parseCommandLine(commands, argv);
    if (invocation.kind === 'help') {
      processOutput.out(`${invocation.text}\n`);
      return 0;
    }
    const values = invocation.values as Record<string, string | undefined>;
    switch (invocation.command) {
      case 'render':
        required('render', values, ['manifests', 'out']);
        return await renderCommand(
          { manifests: values['manifests']!, out: values['out']!, config: values['config'] },
          processOutput,
        );
      case 'validate':
        return await validateCommand({ config: values['config'] }, processOutput);
      default:
        processOutput.out(`${packageVersion()}\n`);
        return 0;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      processOutput.err(`haproxy-template-ic: ${error.message}\n\n${usage(commands)}\n`);
      return 2;
    }
    processOutput.err(`haproxy-template-ic: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
