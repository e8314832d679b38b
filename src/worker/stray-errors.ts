/**
 * @module worker/stray-errors
 * Errors a handler leaves outside its promise: a rejection nobody awaits, a throw in a
 * timer or an event listener. Node's default ends the process on them, and with it
 * every job of the worker; here they are logged, with the job they came from, and the
 * worker keeps serving ("nothing a handler does crashes the runtime").
 *
 * Which job: each run executes inside `jobScope` (an AsyncLocalStorage), and Node hands
 * both events the async context of the code that failed (a rejection: the context the
 * promise was made in; a throw: the callback's), so `jobScope.getStore()` names the job
 * whose code scheduled it. What it cannot attribute: a throw inside `queueMicrotask`
 * (the context is lost there), code run at import time or in `init`, and callbacks of
 * native add-ons or libraries that keep their own callback queues. A resource made
 * during a job and used later (a connection pool opened by the first job) keeps that
 * first job's id on its errors, so read the id as "the job whose code started this".
 *
 * A stray error does not change its job's outcome: the job ends as its handler's
 * promise says. The runtime cannot tell whether the result depends on the failed work,
 * the error can come after the job ended, and a resource shared by later jobs would
 * blame the wrong one; failing on it would make an outcome depend on timing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';

/** What the runtime knows about the job whose code runs now. */
export interface JobScope {
  readonly jobId: string;
  readonly attempt?: number | undefined;
  /** Set once the job ended; a stray error after it says so. */
  ended: boolean;
}

/** The job whose code runs now (undefined outside any job). */
export const jobScope = new AsyncLocalStorage<JobScope>();

type StrayKind = 'unhandledRejection' | 'uncaughtException';

let installed: Logger | undefined;

/**
 * Log stray errors (unhandled rejections, uncaught exceptions) at level error with
 * `requestId` of the job they came from, and keep the process running. Installed once
 * per process by `serve()` and the load-balancing worker; later calls only switch the
 * logger. Answers the uninstall function (tests).
 */
export function catchStrayErrors(logger: Logger): () => void {
  const first = installed === undefined;
  installed = logger;
  if (!first) return () => {};
  const report = (kind: StrayKind, error: unknown): void => {
    const scope = jobScope.getStore();
    const what = kind === 'unhandledRejection' ? 'a promise rejected and never awaited' : 'an exception thrown outside any promise';
    try {
      if (scope === undefined) {
        installed?.error({ err: error, stray: kind }, `stray error (${what}), not attributed to a job; the worker keeps serving`);
        return;
      }
      installed?.error(
        { err: error, stray: kind, requestId: scope.jobId, ...(scope.attempt !== undefined ? { attempt: scope.attempt } : {}), jobEnded: scope.ended },
        `stray error from job ${scope.jobId}${scope.ended ? ' (after it ended)' : ''}: ${what}; the job ends as its handler's promise says, the worker keeps serving`,
      );
    } catch {
      // A logger that throws must not turn a logged error into a crash.
    }
  };
  const onRejection = (reason: unknown): void => report('unhandledRejection', reason);
  const onException = (error: unknown): void => report('uncaughtException', error);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
    installed = undefined;
  };
}
