/**
 * @module harness/http/job-watch
 * Waits for "something happened to this job" (a chunk, a change of status, deletion)
 * without missing a change that lands between reading the job and starting to wait:
 * the watch subscribes first and remembers a change until the next `next()` call.
 */
import type { Clock, EndpointJobs, StopSignal } from 'serverless-worker/internal';

export type WatchWake = 'changed' | 'timeout' | 'aborted';

export class JobWatch {
  #changed = false;
  #wake: ((why: WatchWake) => void) | undefined;
  readonly #unsubscribe: () => void;

  constructor(endpoint: EndpointJobs, jobId: string) {
    this.#unsubscribe = endpoint.onJobChange(jobId, () => {
      this.#changed = true;
      this.#wake?.('changed');
    });
  }

  /** Resolves when the job changed since the previous call, `timeoutMs` passed on `clock`, or `signal` aborted. */
  next(timeoutMs: number, clock: Clock, signal: StopSignal): Promise<WatchWake> {
    if (this.#changed) {
      this.#changed = false;
      return Promise.resolve('changed');
    }
    if (signal.aborted) return Promise.resolve('aborted');
    if (timeoutMs <= 0) return Promise.resolve('timeout');
    return new Promise<WatchWake>((resolve) => {
      const finish = (why: WatchWake): void => {
        this.#wake = undefined;
        this.#changed = false;
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
        resolve(why);
      };
      const onAbort = (): void => finish('aborted');
      const timer = clock.setTimer(timeoutMs, () => finish('timeout'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.#wake = finish;
    });
  }

  close(): void {
    this.#unsubscribe();
    this.#wake = undefined;
  }
}
