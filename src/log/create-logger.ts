/**
 * @module log/create-logger
 * The pino factory. One JSON object a line when the worker runs on the platform
 * (RUNPOD_ENDPOINT_ID set) or writes to something other than a terminal; readable
 * coloured lines on a terminal. Logs go to stderr by default, so that stdout stays
 * free for results (the dry run prints the job record there).
 */
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { exitSafeDestination } from './exit-safe-destination.js';
import { rawStderr } from './raw-output.js';
import { REDACT_CENSOR, REDACT_PATHS } from './redact.js';

type PrettyFactory = typeof import('pino-pretty');

// Loaded only for a terminal: on the platform and in CI logs are JSON, and the
// pretty printer's modules would only lengthen a worker's start.
let prettyFactory: PrettyFactory | undefined;

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  /** Logger name; default `serverless-worker`. */
  name?: string;
  /** pino level; default SW_LOG_LEVEL, else LOG_LEVEL from the environment, else `info`. */
  level?: string;
  /** Force the format; default `json` on the platform or when `stream` is not a TTY, else `pretty`. */
  format?: 'json' | 'pretty';
  /** Where lines go; default stderr (file descriptor 2). */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Environment to read; default process.env. */
  env?: NodeJS.ProcessEnv;
}

const VALID_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** The format chosen for these options and this environment. */
export function chooseLogFormat(options: CreateLoggerOptions = {}): 'json' | 'pretty' {
  if (options.format) return options.format;
  const env = options.env ?? process.env;
  if (env.RUNPOD_ENDPOINT_ID) return 'json';
  if (options.destination) return 'json';
  return process.stderr.isTTY ? 'pretty' : 'json';
}

/**
 * The package that prints pretty log lines on a terminal: an optional peer dependency of the
 * SDK (a developer's terminal needs it, an image does not; the platform package brings it).
 */
export const PRETTY_LOGS_PACKAGE = 'pino-pretty';

/**
 * Load pino-pretty (once) when these options would print pretty lines, with `import()`,
 * which a bundler follows (esbuild with its plain flags puts it in the bundle, evaluated
 * only here). serve() calls it before createLogger(); a direct createLogger() without it
 * requires pino-pretty from node_modules. Where it is not installed (an image, a project
 * without the platform package), the lines are JSON, as off a terminal.
 */
export async function loadPrettyLogs(options: CreateLoggerOptions = {}): Promise<void> {
  if (prettyFactory || chooseLogFormat(options) !== 'pretty') return;
  try {
    prettyFactory = (await import('pino-pretty')).default;
  } catch (error) {
    const { code } = (error ?? {}) as { code?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
  }
}

/** pino-pretty as loadPrettyLogs() left it, else from node_modules; undefined where neither has it (a bundle). */
function prettyNow(): PrettyFactory | undefined {
  if (prettyFactory) return prettyFactory;
  try {
    prettyFactory = createRequire(import.meta.url)('pino-pretty') as PrettyFactory;
  } catch {
    return undefined;
  }
  return prettyFactory;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const requested = (options.level ?? (env.SW_LOG_LEVEL || undefined) ?? env.LOG_LEVEL ?? 'info').toLowerCase();
  const level = VALID_LEVELS.has(requested) ? requested : 'info';
  const base: LoggerOptions = {
    name: options.name ?? 'serverless-worker',
    level,
    redact: { paths: [...REDACT_PATHS], censor: REDACT_CENSOR },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const pretty = chooseLogFormat(options) === 'pretty' ? prettyNow() : undefined;
  if (pretty) {
    // Around job output's wrapping of process.stderr (worker/job-output.ts): a log line is not printed output.
    const destination = options.destination ?? rawStderr();
    return pino(base, pretty({ destination, colorize: true, sync: true, ignore: 'pid,hostname,name' }));
  }
  const destination = options.destination ?? exitSafeDestination(2);
  return pino(base, destination as DestinationStream);
}

/**
 * A formatter that renders another process's JSON log lines as this process's logger
 * would (`--serve-api` relays its supervised worker's lines): pino-pretty's line format
 * when these options print pretty lines and pino-pretty is at hand, else undefined (the
 * JSON line is printed as it came).
 */
export function jsonLineFormatter(options: CreateLoggerOptions = {}): ((line: string) => string) | undefined {
  if (chooseLogFormat(options) !== 'pretty') return undefined;
  const pretty = prettyNow();
  if (!pretty) return undefined;
  const format = pretty.prettyFactory({ colorize: true, ignore: 'pid,hostname,name' });
  return (line) => {
    if (!line.startsWith('{')) return `${line}\n`;
    try {
      return format(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return `${line}\n`;
    }
  };
}
