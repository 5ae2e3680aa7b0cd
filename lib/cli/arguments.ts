import { parseArgs } from 'node:util';

/** One option of a command, as documented in its usage text. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly description: string;
  readonly multiple?: boolean;
  /** Shown in the usage text; the command applies it. */
  readonly defaultText?: string;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
}

export type Invocation =
  | { readonly kind: 'help'; readonly text: string }
  | {
      readonly kind: 'run';
      readonly command: string;
      readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
    };

/** A command line that cannot run; the message names the argument at fault. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const program = 'haproxy-template-ic';

export function usage(commands: readonly CommandSpec[], command?: CommandSpec): string {
  if (command) {
    const lines = [`Usage: ${program} ${command.name} [options]`, '', command.summary, ''];
    const options = Object.entries(command.options);
    if (options.length > 0) lines.push('Options:');
    for (const [name, option] of options) {
      const value = option.type === 'string' ? ` <${option.multiple ? 'value, repeatable' : 'value'}>` : '';
      const fallback = option.defaultText ? ` (default ${option.defaultText})` : '';
      lines.push(`  --${name}${value}`, `      ${option.description}${fallback}`);
    }
    lines.push('  --help', '      Show this help.');
    return lines.join('\n');
  }
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `Usage: ${program} <command> [options]`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Run "${program} <command> --help" for the options of a command.`,
  ].join('\n');
}

/** Parses argv (without node and the script) strictly: unknown commands and options are usage errors. */
export function parseCommandLine(commands: readonly CommandSpec[], argv: readonly string[]): Invocation {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('no command given');
  if (name === '--help' || name === '-h' || name === 'help') return { kind: 'help', text: usage(commands) };
  const command = commands.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help', text: usage(commands, command) };
  try {
    const { values } = parseArgs({
      args: [...rest],
      options: Object.fromEntries(Object.entries(command.options).map(([option, spec]) => [option, { type: spec.type, multiple: spec.multiple ?? false }])),
      strict: true,
      allowPositionals: false,
    });
    return { kind: 'run', command: name, values };
  } catch (error) {
    // parseArgs' messages name the option; they only need the command for context.
    throw new UsageError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A TCP port option: a whole number from 1 to 65535, or the default when absent. */
export function portValue(command: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || port < 1 || port > 65535) {
    throw new UsageError(`${command}: --${name} must be a port number from 1 to 65535, got ${JSON.stringify(value)}`);
  }
  return port;
}
