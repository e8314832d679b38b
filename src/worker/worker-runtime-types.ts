/**
 * @module worker/worker-runtime-types
 * What the dispatch loop (worker-runtime.ts) is given and answers: its events, its
 * options, how it is stopped and why it stopped.
 */
import type { Job } from '../job/index.js';
import type { Clock } from '../clock/index.js';
import type { JobWatch } from '../transports/watchdog/index.js';
import type { RunOutcome } from './job-run.js';

/** Why the runtime stopped, and the process exit code that goes with it. */
export interface WorkerExit {
  /** `harness-gone`: the harness that launched this worker is gone (local/harness-gone.ts). */
  readonly reason: 'shutdown' | 'unresponsive-handler' | 'harness-gone';
  /** 0 after a clean shutdown; 1 when a handler ignored its abort (the worker must be replaced) or its harness is gone. */
  readonly exitCode: number;
}

export interface StopOptions {
  /**
   * How long running jobs may take to finish (their results to land) before they are
   * aborted, ms; default `shutdownTimeoutMs`; `Infinity`: never aborted (the caller ends
   * the process itself). A later stop with a shorter time shortens the wait under way.
   */
  readonly runsWithinMs?: number;
}

export interface WorkerRuntimeEvents {
  /** A job ended (any way); for logs, metrics and tests. */
  onJobEnd?: (job: Job, outcome: RunOutcome) => void;
  /** A job started. */
  onJobStart?: (job: Job) => void;
}

export interface WorkerRuntimeOptions {
  /**
   * The deadline watchdog off the main thread: each running job's deadline goes on it
   * before the handler is called. Default none (a handler that blocks the event loop
   * is then never timed out).
   */
  readonly jobWatch?: JobWatch;
  /**
   * Time for the runs (execution timeouts, grace, durations) and the shutdown wait;
   * default the system clock. A test's ManualClock moves them all; the deadline
   * watchdog (`jobWatch`) judges on real time, so give it only with the system clock.
   */
  readonly clock?: Clock;
}
