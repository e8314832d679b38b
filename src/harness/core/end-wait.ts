/**
 * @module harness/core/end-wait
 * The wait of /runsync, /status-sync and the in-process runners for a job's end: the
 * job as it is read or submitted first, then again on each 'changed' event that may be
 * its end, until it has ended or the wait elapses or is stopped. A change to a status that
 * is not an end (the take) needs no read; a change that carries the ended job's view (a
 * result) needs none either.
 */
import { isTerminal, type JobView } from '../../job/index.js';
import type { Clock } from '../../clock/index.js';
import type { StoredJob } from '../store/job-store.js';
import { toJobView } from '../store/job-record.js';
import type { JobChangeListener } from './job-changes.js';
import type { StopSignal } from './stop-signal.js';

export interface EndWait {
  readonly clock: Clock;
  /** Listen for the job's changes; answers the function that stops listening. */
  readonly onJobChange: (listener: JobChangeListener) => () => void;
  /** The job where the wait starts (a read, or the submit itself: it runs after the listener is added). */
  readonly first: () => Promise<StoredJob>;
  /** The job as it is now (rejects when it is gone). */
  readonly read: () => Promise<StoredJob>;
}

/** Resolve with the job's view once it has ended, or once `timeoutMs` passes or `signal` stops (then with its current view). */
export async function waitForJobEnd(wait: EndWait, timeoutMs: number, signal?: StopSignal): Promise<JobView> {
  let wake: (() => void) | undefined;
  let changed = false;
  let elapsed = false;
  /** The job's view as the change that ended it left it, when the change carried it. */
  let ended: JobView | undefined;
  const unsubscribe = wait.onJobChange((status, view) => {
    if (status !== undefined && !isTerminal(status)) return;
    if (view !== undefined && isTerminal(view.status)) ended = view;
    changed = true;
    wake?.();
  });
  const stop = (): void => {
    elapsed = true;
    wake?.();
  };
  const timer = wait.clock.setTimer(timeoutMs, stop);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    let read = wait.first;
    for (;;) {
      changed = false;
      if (ended) return ended;
      const job = await read();
      read = wait.read;
      if (isTerminal(job.status) || elapsed || signal?.aborted === true) return toJobView(job);
      // A change or the end of the wait while the store answered: read again at once.
      if (!changed && !elapsed) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    timer.cancel();
    unsubscribe();
    signal?.removeEventListener('abort', stop);
  }
}
