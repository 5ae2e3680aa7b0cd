import { pino, type Level, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { REDACTED, type Redactor } from './redaction.ts';

export type { Logger } from 'pino';

export type LogLevel = Level | 'silent';
export const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Where logs go and how they look: JSON lines, or human-readable lines for a terminal. */
export interface LogSettings {
  readonly level: LogLevel;
  readonly format: 'json' | 'pretty';
  readonly colorize?: boolean;
  /** Receives each formatted line, newline included. */
  readonly write: (line: string) => void;
}

/** LOG_LEVEL's value, or a message naming the variable and the levels it takes. */
export function logLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  const level = value.trim().toLowerCase();
  if ((logLevels as readonly string[]).includes(level)) return level as LogLevel;
  throw new Error(`LOG_LEVEL must be one of ${logLevels.join(', ')}; got ${JSON.stringify(value)}`);
}

/** LOG_LEVEL from the environment; human-readable output when the stream is a terminal, JSON otherwise. */
export function logSettingsFromEnvironment(env: Readonly<Record<string, string | undefined>>, stream: { readonly isTTY?: boolean; write(text: string): unknown }): LogSettings {
  const terminal = stream.isTTY === true;
  return { level: logLevel(env['LOG_LEVEL']), format: terminal ? 'pretty' : 'json', colorize: terminal, write: (line) => void stream.write(line) };
}

/** Keys pino blanks wherever they appear one level down; the redactor's scrub covers values by content on top. */
const redactedPaths = ['password', 'authorization', 'token', 'secret', '*.password', '*.authorization', '*.token', '*.secret', 'headers.authorization'];

/**
 * A pino logger. Every line passes through the redactor just before it is
 * written, whatever put the secret into it (a message, a field, an error
 * text); known credential keys are blanked before serialisation too. The
 * terminal format shows the stage and endpoint of child loggers up front.
 */
export function createLogger(settings: LogSettings, redactor: Redactor): Logger {
  const prettify =
    settings.format === 'pretty'
      ? prettyFactory({
          colorize: settings.colorize ?? false,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname,stage,endpoint',
          hideObject: true,
          messageFormat: (log, messageKey) => {
            const where = [log['stage'], log['endpoint']].filter((part) => typeof part === 'string').join(' ');
            return `${where ? `[${where}] ` : ''}${String(log[messageKey] ?? '')}`;
          },
        })
      : undefined;
  return pino(
    {
      level: settings.level,
      redact: { paths: redactedPaths, censor: REDACTED },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: (line) => redactor.scrub(line) },
    },
    { write: (line: string) => settings.write(prettify ? prettify(line) : line) },
  );
}
