/**
 * @module local/dry-run-exit
 * A dry run must never end without its final record: a CI step would read the exit
 * code of a job that never ended. When the process exits while the job runs (the
 * handler, or code it calls, ran `process.exit()`), an 'exit' listener prints a FAILED
 * record `SW_HANDLER_EXITED` and turns an exit code 0 into 1.
 *
 * Why an 'exit' listener rather than patching `process.exit` for the job: it also sees
 * a `process.exit` reference taken before the job, `process.reallyExit`-style exits of
 * libraries and the second-signal exit, and it changes no global the handler can see.
 * Node runs 'exit' listeners synchronously inside `process.exit()`, so the stack taken
 * there still holds the caller's frames: they become the record's `error_traceback`. The
 * listener may only do synchronous work, so the record is written with `writeSync`. What
 * it cannot see: a SIGKILL, or a native crash; the deadline watchdog's own exit prints
 * its record itself and is left alone.
 */
import { isatty } from 'node:tty';
import { systemClock } from '../clock/index.js';
import { ServerlessWorkerError } from '../job/index.js';
import { toErrorPayload, type ErrorOrigin } from '../worker/index.js';
const { writeSync } = process.getBuiltinModule('node:fs');

export interface DryRunExitGuard {
  /** The job's id, once submitted. */
  submitted(jobId: string): void;
  /** A first signal started a drain: an exit after it is the second signal's (SW_WORKER_SHUTDOWN). */
  signalled(signal: NodeJS.Signals): void;
  /** The dry run printed its record (or will exit on its own terms): stand down. */
  dispose(): void;
}

export interface DryRunExitGuardOptions {
  readonly origin: ErrorOrigin;
  /** True when the deadline watchdog has fired: it prints the record and ends the process itself. */
  readonly watchdogFired?: () => boolean;
}

export function guardDryRunExit(options: DryRunExitGuardOptions): DryRunExitGuard {
  let jobId: string | undefined;
  let startedAt: number | undefined;
  let signalled: NodeJS.Signals | undefined;
  const onExit = (code: number): void => {
    if (jobId === undefined || options.watchdogFired?.()) return;
    // Taken here, inside process.exit(): the frames below the listener are its caller's.
    const stack = new Error('process exit').stack?.split('\n').slice(1) ?? [];
    const callerFrames = stack.filter((frame) => !frame.includes('node:') && !frame.includes('dry-run-exit'));
    const exited =
      signalled === undefined
        ? new ServerlessWorkerError(
            'SW_HANDLER_EXITED',
            `The process exited with code ${code} while job ${jobId} was running, before the job ended: process.exit() was called (by the handler or code it ran; error_traceback shows where)`,
            { jobId, exitCode: code },
          )
        : new ServerlessWorkerError(
            'SW_WORKER_SHUTDOWN',
            `The dry run exited (code ${code}) while job ${jobId} was still draining after ${signalled}: a second signal (or process.exit()) ended it before the job did`,
            { jobId, exitCode: code },
          );
    Object.defineProperty(exited, 'name', { value: 'ProcessExit' });
    exited.stack = [`ProcessExit: process.exit(${code}) during job ${jobId}`, ...callerFrames].join('\n');
    const record = {
      id: jobId,
      status: 'FAILED',
      ...(startedAt !== undefined ? { executionTime: Math.round(systemClock.now() - startedAt) } : {}),
      error: toErrorPayload(exited, options.origin),
    };
    const text = isatty(1) ? JSON.stringify(record, null, 2) : JSON.stringify(record);
    try {
      writeSync(1, `${text}\n`);
      writeSync(2, `serverless-worker: ${exited.code}: the process exited (code ${code}) during job ${jobId}; the dry run fails\n`);
    } catch {
      // stdout or stderr closed: the exit code below still tells.
    }
    if (code === 0) process.exitCode = 1;
  };
  process.on('exit', onExit);
  return {
    submitted(id) {
      jobId = id;
      startedAt = systemClock.now();
    },
    signalled(signal) {
      signalled = signal;
    },
    dispose() {
      process.off('exit', onExit);
    },
  };
}
