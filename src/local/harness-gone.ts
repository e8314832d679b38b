/**
 * @module local/harness-gone
 * A worker a harness launched, once that harness is gone (SIGKILLed or crashed, so it
 * could not stop the worker: its pid is gone, local/supervised-child.ts, or a container
 * cannot reach it, local/harness-watch.ts). A harness restarted on the same address (a
 * supervisor's restart, on a PostgreSQL store whose jobs survived) still wants what
 * this worker finished: exiting at once dropped those results, and the restarted
 * harness ran the jobs again. So the worker takes no new job, lets its running jobs
 * finish and their results retry (the platform transport posts a result until it lands),
 * and exits once it holds nothing, or once `waitMs` (SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS)
 * has passed: the jobs it still holds then are the harness's to run again. The harness
 * that comes back accepts each result for the attempt it belongs to, and stops this
 * worker as a leftover of its predecessor (SIGTERM: process-records.ts), which shortens
 * the wait to the worker's `shutdownTimeoutMs`.
 *
 *     const gone = new HarnessGone();
 *     watchHarnessPid(pid, logger, (why) => gone.fire(why));
 *     gone.onGone((why) => keepResultsForReturningHarness({ runtime, waitMs, logger, why, harnessUrl, retryNow }));
 */
import type { Logger } from 'pino';
import { repeatEvery, systemClock } from '../clock/index.js';
import type { StopOptions, WorkerExit } from '../worker/worker-runtime.js';
import { harnessAddress, reachable } from './harness-watch.js';

/** How often the harness's address is tried while results wait for it, ms: a harness that comes back gets them within about this long. */
const PROBE_EVERY_MS = 250;

/** Told once, to every listener, whenever it registers: that the harness is gone, and why. */
export class HarnessGone {
  #why: string | undefined;
  readonly #listeners: Array<(why: string) => void> = [];

  /** The harness is gone (the first call counts). */
  fire(why: string): void {
    if (this.#why !== undefined) return;
    this.#why = why;
    for (const listener of this.#listeners.splice(0)) listener(why);
  }

  /** Call `listener` once the harness is gone (at once when it is already). */
  onGone(listener: (why: string) => void): void {
    if (this.#why !== undefined) listener(this.#why);
    else this.#listeners.push(listener);
  }
}

/** What of the worker runtime this needs. */
export interface StoppableRuntime {
  stop(reason: WorkerExit['reason'], options?: StopOptions): Promise<WorkerExit>;
  readonly runningJobIds: string[];
}

export interface KeepResults {
  readonly runtime: StoppableRuntime;
  /** How long to wait for the jobs held to finish and their results to land, ms. */
  readonly waitMs: number;
  readonly logger: Logger;
  /** Why the harness counts as gone (logged). */
  readonly why: string;
  /** A worker URL of the harness (RUNPOD_WEBHOOK_GET_JOB): its address is tried while results wait. */
  readonly harnessUrl?: string | undefined;
  /** Posts waiting to be tried again try now (the transport's retryNow). */
  readonly retryNow?: (() => void) | undefined;
}

/**
 * Stop taking jobs and wait up to `waitMs` for those held to finish and their results to
 * land (the runtime's stop then ends the process, exit code 1); past it, exit 1 at once.
 * Meanwhile the harness's address is tried every 250 ms: when a connection opens again,
 * the results waiting between two attempts are posted at once.
 */
export function keepResultsForReturningHarness(keep: KeepResults): void {
  const { runtime, waitMs, logger, why } = keep;
  const held = runtime.runningJobIds;
  if (held.length === 0) logger.warn(`${why}; this worker holds no job: exiting`);
  else
    logger.warn(
      { jobs: held, waitMs },
      `${why}; this worker takes no new job and keeps ${held.length} unfinished job(s) and their results for up to ${waitMs} ms, for a harness that comes back on the same address`,
    );
  // Kept alive: the process must end at the wait's end even if nothing else holds the loop.
  const timer = systemClock.setTimer(
    waitMs,
    () => {
      const left = runtime.runningJobIds;
      logger.error(
        { jobs: left, waitMs },
        `no harness took the results of this worker within ${waitMs} ms: exiting; the harness runs its ${left.length} job(s) again (SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS)`,
      );
      logger.flush();
      process.exit(1);
    },
    { keepAlive: true },
  );
  const probes = held.length > 0 ? watchForReturn(keep) : undefined;
  // Running jobs are never aborted here: past the wait, the process ends and the harness requeues them.
  void runtime.stop('harness-gone', { runsWithinMs: Number.POSITIVE_INFINITY }).finally(() => {
    timer.cancel();
    probes?.cancel();
  });
}

/** Try the harness's address; each time a connection opens after failing, posts waiting to be tried again go at once. */
function watchForReturn(keep: KeepResults): { cancel(): void } | undefined {
  const address = keep.harnessUrl !== undefined ? harnessAddress(keep.harnessUrl.replaceAll('$ID', 'x')) : undefined;
  const retryNow = keep.retryNow;
  if (address === undefined || retryNow === undefined) return undefined;
  let wasReachable = false;
  let probing = false;
  return repeatEvery(systemClock, PROBE_EVERY_MS, () => {
    if (probing) return;
    probing = true;
    void reachable(address.host, address.port, PROBE_EVERY_MS).then((ok) => {
      probing = false;
      if (ok && !wasReachable) {
        keep.logger.info({ harness: `${address.host}:${address.port}` }, 'the harness address answers again: posting the results that wait');
        retryNow();
      }
      wasReachable = ok;
    });
  });
}
