/**
 * @module serve
 * `serve(handler, options)`: the composition root. It validates the options, reads
 * the environment and the command line, and picks the mode:
 * - on the platform (`RUNPOD_WEBHOOK_GET_JOB` set): the platform transport;
 * - with `--serve-api` (or `--rp_serve_api`): the local queue API over HTTP;
 * - otherwise: a dry run of the test input (`--test-input`, `--test_input`, or
 *   `test_input.json` in the working directory).
 */
import type { Logger } from 'pino';
import { isServerlessWorkerError } from './job/index.js';
import { createLogger } from './log/index.js';
import {
  parseWorkerArgs,
  resolveOptions,
  resolveTestInput,
  type Handler,
  type ServeOptions,
} from './worker/index.js';

/** Print a start-up error as one clear line and exit 1. */
function fail(logger: Logger | undefined, error: unknown): never {
  const code = isServerlessWorkerError(error) ? `${error.code}: ` : '';
  const message = `serverless-worker: ${code}${(error as Error)?.message ?? String(error)}`;
  if (logger) logger.fatal({ err: error }, message);
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Flush logs and stdout, then exit with `code`. */
function exitWith(logger: Logger, code: number): void {
  logger.flush();
  process.stdout.write('', () => process.exit(code));
}

/**
 * Run `handler` as a worker. On the platform it serves jobs until the platform stops
 * it; locally it dry-runs the test input and exits 0 (COMPLETED) or 1. With
 * `options.init`, every mode runs it first (the start-up phase) and hands its value
 * to every job as `ctx.state`.
 */
export async function serve<Input = Record<string, unknown>, State = undefined>(
  handler: Handler<Input, State>,
  options: ServeOptions<Input, State> = {},
): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = resolveOptions(options);
    logger = config.logger ?? createLogger();
    const args = parseWorkerArgs(process.argv.slice(2));
    const anyHandler = handler as Handler<unknown, unknown>;
    if (process.env.RUNPOD_WEBHOOK_GET_JOB) {
      const { runPlatformWorker } = await import('./platform-mode.js');
      const exitCode = await runPlatformWorker(anyHandler, config, logger);
      exitWith(logger, exitCode);
      return;
    }
    if (args.serveApi) {
      const { runServeApi } = await import('./local/serve-api.js');
      await runServeApi(anyHandler, config, args, logger);
      return;
    }
    const testInput = resolveTestInput(args.testInput !== undefined ? { flag: args.testInput } : {});
    logger.info({ from: testInput.from }, 'dry run: no platform variables; running the test input once');
    // Loaded per mode, as the other two: the platform path never loads the local harness.
    const { runDryRun } = await import('./local/dry-run.js');
    const { exitCode } = await runDryRun(anyHandler, config, testInput.request, logger);
    exitWith(logger, exitCode);
  } catch (error) {
    fail(logger, error);
  }
}
