/**
 * @module serve
 * `serve(handler, options)`: the composition root. It reads the command line,
 * validates the options and the environment, and picks the mode:
 * - `--help`: print the flags and exit 0;
 * - on the platform (`RUNPOD_WEBHOOK_GET_JOB` set): the platform transport;
 * - with `--serve-api` (or `--rp_serve_api`): the local queue API over HTTP;
 * - otherwise: a dry run of the test input (`--test-input`, `--test_input`, or
 *   `test_input.json` beside the worker script, else in the working directory).
 * A start-up error prints its code, message and fix on stderr (see worker/startup-error)
 * and exits 1.
 */
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { createLogger, loadPrettyLogs } from './log/index.js';
import { HARNESS_GONE_AFTER_ENV, HARNESS_PID_ENV } from './settings/launched-worker.js';
// A type only: the module loads for launched workers alone.
import type { HarnessGone } from './local/harness-gone.js';
import {
  WORKER_USAGE,
  attributeJobOutput,
  catchStrayErrors,
  checkRuntimeEnv,
  checkTestInput,
  formatStartupError,
  warnOnOldNode,
  parseWorkerArgs,
  resolveOptions,
  resolveTestInput,
  wantsStack,
  type Handler,
  type ServeOptions,
  type WorkerArgs,
} from './worker/index.js';

/** Print a start-up error as its code, message and fix (the stack only when asked for) and exit 1. */
function fail(logger: Logger | undefined, error: unknown, args: WorkerArgs | undefined): never {
  const withStack = wantsStack(process.argv.slice(2), process.env, args?.logLevel);
  if (logger && withStack) logger.debug({ err: error }, 'start-up failed');
  logger?.flush();
  process.stderr.write(formatStartupError(error, withStack));
  process.exit(1);
}

// One watch per process, whatever serve() is called again with (a test's second worker).
let idleCompactionStarted = false;

/** Start the idle compaction (local/idle-compaction.ts), loaded only by platform workers, once per process. */
async function compactWhenIdleOnce(fullAfterMs: number | false): Promise<void> {
  if (fullAfterMs === false || idleCompactionStarted) return;
  idleCompactionStarted = true;
  (await import('./local/idle-compaction.js')).compactWhenIdle({ fullAfterMs });
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
  let args: WorkerArgs | undefined;
  try {
    args = parseWorkerArgs(process.argv.slice(2));
    if (args.help) {
      process.stdout.write(WORKER_USAGE, () => process.exit(0));
      return;
    }
    const config = resolveOptions(options);
    // Every mode, before any: a variable the platform would refuse stops a dry run too.
    checkRuntimeEnv(process.env);
    const level = args.logLevel ?? (args.verbose ? 'debug' : undefined);
    if (!config.logger) await loadPrettyLogs();
    logger = config.logger ?? createLogger(level !== undefined ? { level } : {});
    // Every mode: a rejection or throw the handler leaves outside its promise is logged, not fatal.
    catchStrayErrors(logger);
    // Every mode, once: a Node older than the packages need is said at start (node-version.ts).
    warnOnOldNode(logger);
    // Every mode: what a handler prints is a line of its job, as its log lines are (job-output.ts).
    attributeJobOutput();
    const anyHandler = handler as Handler<unknown, unknown>;
    if (process.env.RUNPOD_WEBHOOK_GET_JOB) {
      // The worker of a --serve-api process (the platform's local/supervisor.ts): it leaves with its supervisor.
      const supervisor = Number(process.env.SW_SUPERVISOR_PID);
      const supervised = Number.isInteger(supervisor) && supervisor > 0;
      if (supervised) (await import('./local/supervised-child.js')).exitWhenOrphaned(supervisor, logger);
      // Every platform worker (the --serve-api child included) gives back the heap a busy
      // spell grew once its jobs stop (local/idle-compaction.ts; bench/README, issue 46 item 5).
      await compactWhenIdleOnce(config.idleCompactionMs);
      // A worker a harness's launcher started (a process: the harness's pid; a container: its
      // address): told when that harness is gone, it delivers what it finished, then exits (local/harness-gone.ts).
      const harnessPid = Number(process.env[HARNESS_PID_ENV]);
      const goneAfterMs = Number(process.env[HARNESS_GONE_AFTER_ENV]);
      const harnessUrl = process.env.RUNPOD_WEBHOOK_GET_JOB;
      const watchesPid = Number.isInteger(harnessPid) && harnessPid > 0;
      const watchesAddress = Number.isInteger(goneAfterMs) && goneAfterMs > 0 && harnessUrl !== undefined;
      let harnessGone: HarnessGone | undefined;
      if (watchesPid || watchesAddress) {
        const gone = new (await import('./local/harness-gone.js')).HarnessGone();
        harnessGone = gone;
        if (watchesPid) (await import('./local/supervised-child.js')).watchHarnessPid(harnessPid, logger, (why) => gone.fire(why));
        if (watchesAddress)
          (await import('./local/harness-watch.js')).watchHarnessReachable(harnessUrl.replaceAll('$ID', 'x'), goneAfterMs, logger, (why) => gone.fire(why));
      }
      const { runPlatformWorker } = await import('./platform-mode.js');
      const exitCode = await runPlatformWorker(anyHandler, config, logger, {
        ...(supervised ? { localInitFailure: true } : {}),
        ...(harnessGone ? { harnessGone } : {}),
      });
      exitWith(logger, exitCode);
      return;
    }
    if (args.serveApi) {
      // The local API is the platform package's (a dev dependency); the image needs only the SDK.
      const { loadPlatform } = await import('./local/platform-package.js');
      const { runServeApi } = await loadPlatform('--serve-api', () => import('serverless-worker-platform/serve-api'));
      await runServeApi(anyHandler, config, args, logger);
      return;
    }
    const testInput = resolveTestInput(args.testInput !== undefined ? { flag: args.testInput } : { scriptDir: scriptDirectory() });
    checkTestInput(config.inputSchema, testInput);
    logger.info({ from: testInput.from }, `dry run: no platform variables; running the test input from ${testInput.from} once`);
    // Loaded per mode, as the other two: the platform path never loads the local harness.
    const { runDryRun } = await import('./local/dry-run.js');
    const { exitCode } = await runDryRun(anyHandler, config, testInput.request, logger);
    exitWith(logger, exitCode);
  } catch (error) {
    fail(logger, error, args);
  }
}

/** The directory of the worker script (process.argv[1]), if there is one. */
function scriptDirectory(): string | undefined {
  const script = process.argv[1];
  return script === undefined || script === '' ? undefined : dirname(resolve(script));
}
