#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import { parseCommandLine, usage, UsageError, type CommandSpec } from '../lib/cli/arguments.ts';

/** The composition root: parses the command line and runs one command. */

const commands: readonly CommandSpec[] = [{ name: 'version', summary: 'Print the version and exit.', options: {} }];

/** Found by walking up, as the compiled entry sits one level deeper (dist/streams/) than the source. */
function version(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    const manifest = new URL('package.json', dir);
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    if (dir.pathname === '/') throw new Error('package.json not found above the entry point');
  }
}

function main(argv: readonly string[]): number {
  let invocation;
  try {
    invocation = parseCommandLine(commands, argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`haproxy-template-ic: ${error.message}\n\n${usage(commands)}\n`);
    return 2;
  }
  if (invocation.kind === 'help') {
    process.stdout.write(`${invocation.text}\n`);
    return 0;
  }
  process.stdout.write(`${version()}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
