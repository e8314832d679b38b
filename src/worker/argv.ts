/**
 * @module worker/argv
 * The flags a worker process understands, in our spelling and in the spelling of the
 * platform's Python SDK (`--test_input`, `--rp_serve_api`, ...), so that people
 * migrating can keep their commands. An unknown flag is refused with the closest known
 * one (`--tset-input` -> `--test-input`); arguments of the author's own go after `--`.
 */
import { parseArgs } from 'node:util';
import { ServerlessWorkerError } from '../job/index.js';
import { didYouMean } from './closest-name.js';

export interface WorkerArgs {
  testInput?: string;
  serveApi: boolean;
  host?: string;
  port?: number;
  apiKey?: string;
  /** Allow a non-loopback --host without an API key. */
  insecureNoAuth: boolean;
  /** --serve-api applies the spec 8.2 rate limits (true unless --no-rate-limit). */
  rateLimit: boolean;
  /** --help / -h: print the usage and exit 0. */
  help: boolean;
  /** --verbose (or --rp_debugger): debug logs, and the stack of a start-up error. */
  verbose: boolean;
  /** --log-level / --rp_log_level: the pino level for this run. */
  logLevel?: string;
  /** Arguments after `--`, left to the worker author. */
  rest: string[];
}

const OPTIONS = {
  'test-input': { type: 'string' },
  test_input: { type: 'string' },
  'serve-api': { type: 'boolean' },
  rp_serve_api: { type: 'boolean' },
  host: { type: 'string' },
  rp_api_host: { type: 'string' },
  port: { type: 'string' },
  rp_api_port: { type: 'string' },
  'api-key': { type: 'string' },
  'insecure-no-auth': { type: 'boolean' },
  'no-rate-limit': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  verbose: { type: 'boolean' },
  rp_debugger: { type: 'boolean' },
  'log-level': { type: 'string' },
  rp_log_level: { type: 'string' },
} as const;

/** Every flag name a worker accepts (without the dashes). */
export const WORKER_FLAGS: readonly string[] = Object.keys(OPTIONS);

/** What `--help` prints. */
export const WORKER_USAGE = `Usage: node worker.js [flags] [-- your own arguments]

Without flags the worker dry-runs its test input once and exits (0 when the job COMPLETED).
On the platform (RUNPOD_WEBHOOK_GET_JOB set) it serves jobs and ignores the local flags.

  --test-input <json|@file>  the dry run's job request, e.g. '{"input":{"prompt":"hi"}}' or
                             @test_input.json (default: test_input.json beside the worker
                             script, else in the working directory)   [--test_input]
  --serve-api                serve the queue API locally (/run, /runsync, /status/:id, ...
                             at the root and under /v2/<endpoint>)     [--rp_serve_api]
  --host <address>           --serve-api address (default 127.0.0.1)  [--rp_api_host]
  --port <n>                 --serve-api port (default 8000; 0 picks a free one) [--rp_api_port]
  --api-key <key>            --serve-api key (default SERVERLESS_WORKER_API_KEY)
  --insecure-no-auth         allow a non-loopback --host without an API key
  --no-rate-limit            --serve-api without the spec 8.2 rate limits (load tests)
  --log-level <level>        fatal, error, warn, info, debug, trace, silent
                             (default SW_LOG_LEVEL, else LOG_LEVEL, else info) [--rp_log_level]
  --verbose                  debug logs and the stack of a start-up error [--rp_debugger]
  -h, --help                 print this and exit
`;

function invalidFlag(message: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_INVALID_OPTIONS', message);
}

/** Parse a worker's argv (without node and the script); throws SW_INVALID_OPTIONS for an unknown flag or a stray argument. */
export function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; strict: false; allowPositionals: true; tokens: true }>>;
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
  const text = (key: keyof typeof OPTIONS): string | undefined => {
    const value = values[key];
    if (value === true) throw invalidFlag(`--${key} needs a value, e.g. --${key}=...`);
    return typeof value === 'string' ? value : undefined;
  };
  const portText = text('port') ?? text('rp_api_port');
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw invalidFlag(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(portText)}`);
    }
  }
  const args: WorkerArgs = {
    serveApi: values['serve-api'] === true || values.rp_serve_api === true,
    insecureNoAuth: values['insecure-no-auth'] === true,
    rateLimit: values['no-rate-limit'] !== true,
    help: values.help === true,
    verbose: values.verbose === true || values.rp_debugger === true,
    rest,
  };
  const testInput = text('test-input') ?? text('test_input');
  if (testInput !== undefined) args.testInput = testInput;
  const host = text('host') ?? text('rp_api_host');
  if (host !== undefined) args.host = host;
  if (port !== undefined) args.port = port;
  const apiKey = text('api-key');
  if (apiKey !== undefined) args.apiKey = apiKey;
  const logLevel = text('log-level') ?? text('rp_log_level');
  if (logLevel !== undefined) {
    const level = logLevel.toLowerCase();
    if (!LOG_LEVELS.includes(level)) throw invalidFlag(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
    args.logLevel = level;
  }
  return args;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
