/**
 * @module worker/argv
 * The flags a worker process understands, in our spelling and in the spelling of the
 * platform's Python SDK (`--test_input`, `--rp_serve_api`, ...), so that people
 * migrating can keep their commands.
 */
import { parseArgs } from 'node:util';
import { ServerlessWorkerError } from '../job/index.js';

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
} as const;

/** Parse a worker's argv (without node and the script). Unknown flags are left to the author. */
export function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true }));
  } catch (error) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Cannot parse the worker's command line: ${(error as Error).message}`);
  }
  const text = (key: string): string | undefined => {
    const value = values[key];
    if (value === true) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--${key} needs a value, e.g. --${key}=...`);
    }
    return typeof value === 'string' ? value : undefined;
  };
  const portText = text('port') ?? text('rp_api_port');
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `--port must be a whole number from 0 to 65535, got ${JSON.stringify(portText)}`);
    }
  }
  const args: WorkerArgs = {
    serveApi: values['serve-api'] === true || values.rp_serve_api === true,
    insecureNoAuth: values['insecure-no-auth'] === true,
    rateLimit: values['no-rate-limit'] !== true,
  };
  const testInput = text('test-input') ?? text('test_input');
  if (testInput !== undefined) args.testInput = testInput;
  const host = text('host') ?? text('rp_api_host');
  if (host !== undefined) args.host = host;
  if (port !== undefined) args.port = port;
  const apiKey = text('api-key');
  if (apiKey !== undefined) args.apiKey = apiKey;
  return args;
}
