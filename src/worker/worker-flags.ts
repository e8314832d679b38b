/**
 * @module worker/worker-flags
 * The flags a worker process understands (its own and those of `--serve-api`), each
 * declared once (settings/setting.ts) with the spellings of the platform's Python SDK
 * beside it (`--test_input`, `--rp_serve_api`, ...). argv.ts parses with them, `--help`
 * prints them and the README's table is made from them (scripts/settings-docs.ts).
 */
import * as z from 'zod';
import { parseWholeNumber, type Setting } from '../settings/setting.js';
import { API_KEY_ENV, LOG_LEVELS } from '../settings/worker-env.js';

export interface WorkerFlag extends Setting {
  /** Other spellings, the Python SDK's: `--rp_serve_api`. */
  readonly aliases?: readonly string[];
  /** A one-letter form: `-h`. */
  readonly short?: string;
}

/** Address `--serve-api` listens on unless `--host` says otherwise. */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
/** Port `--serve-api` listens on unless `--port` says otherwise. */
export const DEFAULT_SERVE_PORT = 8000;

/** The pino levels `--log-level` takes (SW_LOG_LEVEL's: declared with it). */
export { LOG_LEVELS };

const portSchema = z.number().int().min(0).max(65_535);

export const WORKER_FLAG_SETTINGS = {
  testInput: {
    flag: '--test-input <json|@file>',
    aliases: ['--test_input'],
    schema: z.string().optional(),
    defaultText: '`test_input.json` beside the worker script, else in the working directory',
    description: `the dry run's job request, e.g. '{"input":{"prompt":"hi"}}' or @test_input.json`,
  },
  serveApi: {
    flag: '--serve-api',
    aliases: ['--rp_serve_api'],
    schema: z.boolean().default(false),
    defaultText: 'off',
    description: 'serve the queue API locally (/run, /runsync, /status/:id, ... at the root and under /v2/<endpoint>), the worker in a child process',
  },
  host: {
    flag: '--host <address>',
    aliases: ['--rp_api_host'],
    schema: z.string().min(1).optional(),
    default: DEFAULT_SERVE_HOST,
    description: '--serve-api: the address to listen on; without an API key only loopback is allowed',
  },
  port: {
    flag: '--port <n>',
    aliases: ['--rp_api_port'],
    schema: portSchema.optional(),
    default: DEFAULT_SERVE_PORT,
    description: '--serve-api: the port; 0 picks a free one',
    parseArgument: (value) => parseWholeNumber(value, 0, 65_535),
  },
  apiKey: {
    flag: '--api-key <key>',
    env: API_KEY_ENV,
    schema: z.string().min(1).optional(),
    description: '--serve-api: require this key on every route',
  },
  insecureNoAuth: {
    flag: '--insecure-no-auth',
    schema: z.boolean().default(false),
    defaultText: 'off',
    description: '--serve-api: allow a non-loopback --host without an API key',
  },
  rateLimit: {
    flag: '--no-rate-limit',
    schema: z.boolean().default(true),
    defaultText: 'limits on',
    description:
      "--serve-api without the platform's per-endpoint rate limits on /run, /runsync and the other queue operations (e.g. to load-test a worker locally); the banner prints the limits in force",
  },
  watch: {
    flag: '--watch',
    schema: z.boolean().default(false),
    defaultText: 'off',
    description:
      "--serve-api: restart only the worker child when a file under the worker script's folder changes; the queue API, the dashboard and every job stay (jobs the old child held go back to the queue)",
  },
  logLevel: {
    flag: '--log-level <level>',
    aliases: ['--rp_log_level'],
    schema: z.enum(LOG_LEVELS).optional(),
    defaultText: '`$SW_LOG_LEVEL`, else `$LOG_LEVEL`, else `info`',
    description: `the log level: ${LOG_LEVELS.join(', ')}`,
  },
  verbose: {
    flag: '--verbose',
    aliases: ['--rp_debugger'],
    schema: z.boolean().default(false),
    defaultText: 'off',
    description: 'debug logs, and the stack of a start-up error',
  },
  help: {
    flag: '--help',
    short: 'h',
    schema: z.boolean().default(false),
    defaultText: 'off',
    description: 'print this and exit',
  },
} as const satisfies Record<string, WorkerFlag>;

/** The flag as `--help` and the README show it: `--port <n>`, `-h, --help`. */
export function workerFlagText(flag: WorkerFlag): string {
  return flag.short !== undefined ? `-${flag.short}, ${flag.flag}` : flag.flag;
}

/** The default, said in plain words for `--help`. */
function spokenDefault(flag: WorkerFlag): string {
  // A switch needs no default said: off unless given (`--no-x`: on unless given).
  if (!flag.flag.includes('<')) return '';
  const parts = [
    ...(flag.env !== undefined ? [flag.env] : []),
    ...(flag.default !== undefined
      ? [String(flag.default)]
      : flag.defaultText !== undefined && flag.defaultText !== 'off'
        ? [flag.defaultText.replaceAll('`', '')]
        : []),
  ];
  return parts.length > 0 ? ` (default ${parts.join(', else ')})` : '';
}

/** What `--help` prints. */
export function workerUsage(): string {
  const lines = Object.values(WORKER_FLAG_SETTINGS).map((flag: WorkerFlag) => {
    const aliases = flag.aliases !== undefined ? ` [${flag.aliases.join(', ')}]` : '';
    return `  ${workerFlagText(flag)}\n      ${flag.description}${spokenDefault(flag)}${aliases}`;
  });
  return [
    'Usage: node worker.js [flags] [-- your own arguments]',
    '',
    'Without flags the worker dry-runs its test input once and exits (0 when the job COMPLETED).',
    'On the platform (RUNPOD_WEBHOOK_GET_JOB set) it serves jobs and ignores the local flags.',
    '',
    ...lines,
    '',
  ].join('\n');
}
