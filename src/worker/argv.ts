/**
 * @module worker/argv
 * The flags a worker process understands, in our spelling and in the spelling of the
 * platform's Python SDK (`--test_input`, `--rp_serve_api`, ...), so that people
 * migrating can keep their commands. An unknown flag is refused with the closest known
 * one (`--tset-input` -> `--test-input`); arguments of the author's own go after `--`.
 */
import type { ParseArgsConfig } from 'node:util';
import { ServerlessWorkerError } from '../job/index.js';
import { didYouMean } from './closest-name.js';
import { flagName } from '../settings/setting.js';
import { LOG_LEVELS, WORKER_FLAG_SETTINGS, workerUsage, type WorkerFlag } from './worker-flags.js';
const { parseArgs } = process.getBuiltinModule('node:util');

export interface WorkerArgs {
  testInput?: string;
  serveApi: boolean;
  host?: string;
  port?: number;
  apiKey?: string;
  /** Allow a non-loopback --host without an API key. */
  insecureNoAuth: boolean;
  /** --serve-api applies the platform's per-endpoint rate limits (true unless --no-rate-limit). */
  rateLimit: boolean;
  /** --serve-api --watch: restart the worker child when a source file changes, the API and its jobs kept. */
  watch: boolean;
  /** --help / -h: print the usage and exit 0. */
  help: boolean;
  /** --verbose (or --rp_debugger): debug logs, and the stack of a start-up error. */
  verbose: boolean;
  /** --log-level / --rp_log_level: the pino level for this run. */
  logLevel?: string;
  /** Arguments after `--`, left to the worker author. */
  rest: string[];
}

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

/** Every spelling of a flag, without the dashes: `serve-api`, `rp_serve_api`. */
function spellings(flag: WorkerFlag): string[] {
  return [flagName(flag), ...(flag.aliases ?? [])].map((spelling) => spelling.replace(/^--/, ''));
}

const OPTIONS: ParseOptions = Object.fromEntries(
  Object.values(WORKER_FLAG_SETTINGS).flatMap((flag: WorkerFlag) =>
    spellings(flag).map(
      (name, index) =>
        [name, { type: flag.flag.includes('<') ? 'string' : 'boolean', ...(index === 0 && flag.short !== undefined ? { short: flag.short } : {}) }] as const,
    ),
  ),
);

/** Every flag name a worker accepts (without the dashes). */
export const WORKER_FLAGS: readonly string[] = Object.keys(OPTIONS);

/** What `--help` prints. */
export const WORKER_USAGE = workerUsage();

function invalidFlag(message: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_INVALID_OPTIONS', message);
}

/** Parse a worker's argv (without node and the script); throws SW_INVALID_OPTIONS for an unknown flag or a stray argument. */
export function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: ParseOptions; strict: false; allowPositionals: true; tokens: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  } catch (error) {
    throw invalidFlag(`Cannot parse the worker's command line: ${(error as Error).message}`);
  }
  const { values, tokens } = parsed;
  const rest: string[] = [];
  let afterTerminator = false;
  for (const token of tokens) {
    if (token.kind === 'option-terminator') afterTerminator = true;
    else if (token.kind === 'option' && !(token.name in OPTIONS)) {
      const flag = token.rawName.split('=')[0] ?? token.rawName;
      throw invalidFlag(`Unknown flag ${flag}${didYouMean(token.name, WORKER_FLAGS, '--')} (--help lists the flags; put your own arguments after --)`);
    } else if (token.kind === 'positional') {
      if (afterTerminator) rest.push(token.value);
      else {
        throw invalidFlag(
          `Unexpected argument ${JSON.stringify(token.value)}: a worker takes only flags (--help lists them); ` +
            'for a test input file use --test-input @file.json; put your own arguments after --',
        );
      }
    }
  }
  /** The value of the first spelling given: `--serve-api` or `--rp_serve_api`. */
  const given = (flag: WorkerFlag): { spelling: string; value: string | boolean } | undefined => {
    for (const spelling of spellings(flag)) {
      const value = values[spelling];
      if (typeof value === 'string' || typeof value === 'boolean') return { spelling, value };
    }
    return undefined;
  };
  const text = (flag: WorkerFlag): string | undefined => {
    const found = given(flag);
    if (found?.value === true) throw invalidFlag(`--${found.spelling} needs a value, e.g. --${found.spelling}=...`);
    return typeof found?.value === 'string' ? found.value : undefined;
  };
  const on = (flag: WorkerFlag): boolean => given(flag)?.value === true;
  const flags = WORKER_FLAG_SETTINGS;
  const portText = text(flags.port);
  let port: number | undefined;
  if (portText !== undefined) {
    try {
      port = flags.port.parseArgument(portText);
    } catch (error) {
      throw invalidFlag(`--port: ${(error as Error).message}`);
    }
  }
  const args: WorkerArgs = {
    serveApi: on(flags.serveApi),
    insecureNoAuth: on(flags.insecureNoAuth),
    rateLimit: !on(flags.rateLimit),
    watch: on(flags.watch),
    help: on(flags.help),
    verbose: on(flags.verbose),
    rest,
  };
  const testInput = text(flags.testInput);
  if (testInput !== undefined) args.testInput = testInput;
  const host = text(flags.host);
  if (host !== undefined) args.host = host;
  if (port !== undefined) args.port = port;
  const apiKey = text(flags.apiKey);
  if (apiKey !== undefined) args.apiKey = apiKey;
  const logLevel = text(flags.logLevel);
  if (logLevel !== undefined) {
    const level = LOG_LEVELS.find((name) => name === logLevel.toLowerCase());
    if (level === undefined) throw invalidFlag(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
    args.logLevel = level;
  }
  return args;
}
