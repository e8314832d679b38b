/**
 * @module local/dry-run
 * One job through the full lifecycle on a laptop or in CI: the test input is
 * submitted to an in-process harness, run by the worker through the in-process
 * transport, its stream chunks printed as they arrive (one JSON object a line on
 * stdout), then the final job record. Logs go to stderr. Exit code 0 when the job
 * COMPLETED, 1 otherwise.
 */
import type { Logger } from 'pino';
import { rawWrite } from '../log/index.js';
import type { JobRequest, JobView } from '../job/index.js';
import { onShutdownSignals, startHandler, type Handler, type WorkerConfig } from '../worker/index.js';
import { guardDryRunExit } from './dry-run-exit.js';
import { STOPPED_SETTLE_MS, viewAfterStop } from './dry-run-stop.js';
import { printInitFailure } from './init-failure.js';
import { startLocalWorker } from './local-worker.js';

export interface DryRunResult {
  readonly record: DryRunRecord;
  readonly exitCode: number;
}

/** The final job record as the dry run prints it: the error parsed back into an object. */
export type DryRunRecord = Omit<JobView, 'error'> & { error?: unknown };

/** Wait for the job far longer than any execution timeout could run (7 days). */
const WAIT_FOREVER_MS = 2 ** 31 - 1;

// Through stdout's own write: a chunk is printed from the handler's turn (job-output.ts would name it a line of the job).
function printLine(value: unknown): void {
  rawWrite.stdout(`${JSON.stringify(value)}\n`);
}

export function dryRunRecord(view: JobView): DryRunRecord {
  if (typeof view.error !== 'string') return view;
  let error: unknown = view.error;
  try {
    error = JSON.parse(view.error);
  } catch {
    // Keep the text as it is.
  }
  return { ...view, error };
}

export async function runDryRun(handler: Handler<unknown, unknown>, config: WorkerConfig, request: JobRequest, logger: Logger): Promise<DryRunResult> {
  // init first (its duration is logged); a failed one ends the dry run before any job.
  const started = await startHandler(handler, config, logger, { workerId: config.workerId ?? 'local', errorInLog: false });
  if (!started.ok) {
    const record: DryRunRecord = { id: '', status: 'FAILED', ...(started.outcome.ok ? {} : { error: started.outcome.error.toJSON().error }) };
    printLine(record);
    await printInitFailure(started.outcome, logger);
    return { record, exitCode: started.exitCode === 0 ? 1 : started.exitCode };
  }
  // A handler that blocks the event loop past its timeout: the watchdog thread prints the record and exits 1.
  const local = startLocalWorker(started.handler, config, logger, { watchdog: 'dry-run', logEveryJob: true });
  const { harness, endpoint, runtime } = local;
  const origin = { workerId: local.transport.workerId };
  // process.exit() during the job: a FAILED record all the same, and not exit 0 (dry-run-exit.ts).
  const exitGuard = guardDryRunExit({ origin, watchdogFired: local.watchdogFired });
  // SIGTERM/SIGINT drain the job (within shutdownTimeoutMs) and still print its record;
  // once the runtime has stopped, the wait for the job ends too (dry-run-stop.ts).
  const stopped = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const offSignals = onShutdownSignals(logger, (signal) => {
    stoppedBy = signal;
    exitGuard.signalled(signal);
    void runtime.stop().then(() => local.harness.clock.setTimer(STOPPED_SETTLE_MS, () => stopped.abort(), { keepAlive: true }));
  });
  // Watching before the job starts (and the thread's start-up cost paid before, not during, it).
  await local.watchdogReady;
  const { id } = await endpoint.submit(request);
  exitGuard.submitted(id);
  logger.info({ requestId: id }, 'dry run: job submitted');
  /** Reads one after the other, so that chunks print in order. */
  let printing = Promise.resolve();
  const printChunks = (): Promise<void> => {
    printing = printing
      .then(async () => {
        if (!(await endpoint.find(id))) return;
        for (const chunk of (await endpoint.readStream(id)).stream) printLine({ stream: chunk });
      })
      .catch(() => {});
    return printing;
  };
  const unsubscribe = endpoint.onJobChange(id, () => void printChunks());
  let view: JobView;
  try {
    view = await endpoint.waitForEnd(id, WAIT_FOREVER_MS, stopped.signal);
    if (stoppedBy !== undefined) view = viewAfterStop(view, stoppedBy, origin);
  } finally {
    unsubscribe();
    offSignals();
  }
  await printChunks();
  const record = dryRunRecord(view);
  if (process.stdout.isTTY) rawWrite.stdout(`${JSON.stringify(record, null, 2)}\n`);
  else printLine(record);
  exitGuard.dispose();
  const exit = await local.stop();
  await harness.close();
  const exitCode = view.status === 'COMPLETED' && exit.exitCode === 0 ? 0 : 1;
  return { record, exitCode };
}
