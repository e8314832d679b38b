/**
 * @module transports/platform/stop-poller
 * The job-stop long poll: `GET <job-stop URL>` answered 204 (nothing to stop) or
 * `{"jobsToStop": ["<job id>", ...]}`. It runs only while the worker holds a job (a
 * stop can only concern a held job, and an idle worker should not keep a second
 * request open on the platform); a poll already open when the last job ends is let
 * finish rather than cut.
 *
 * The protocol does not say why a job must stop (cancel, or the platform's execution
 * timeout), so a stop reads as `cancelled`, which also matches the reference worker:
 * no result is posted for it. The local harness adds a `reasons` map
 * (`{"<job id>": "timeout"}`), which is read when present.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import type { StopReason } from '../../job/index.js';
import { backoffDelay, sleep, type BackoffPolicy, type Clock } from '../../clock/index.js';
import { RequestTimeoutError, type PlatformHttp } from './http-client.js';
import { urlForLog } from './urls.js';

const StopAnswerSchema = z.object({
  jobsToStop: z.array(z.string().min(1)),
  reasons: z.record(z.string(), z.enum(['cancelled', 'timeout', 'expired'])).optional(),
  /** Our harness: the attempt to stop, per job. */
  attempts: z.record(z.string(), z.number().int()).optional(),
});

/** The reason given to a stop the platform did not explain. */
export const DEFAULT_STOP_REASON: StopReason = 'cancelled';

export interface StopPollerOptions {
  readonly http: PlatformHttp;
  /** The job-stop URL (the take URL with `/job-stop/`). */
  readonly url: string;
  /** Bound of one poll, ms. */
  readonly pollTimeoutMs: number;
  /** Waits after failed polls. */
  readonly backoff: BackoffPolicy;
  readonly logger: Logger;
  readonly onStop: (jobId: string, reason: StopReason, attempt: number | undefined) => void;
  /** Times the backoff; default the system clock. */
  readonly clock?: Clock;
}

export class StopPoller {
  readonly #options: StopPollerOptions;
  readonly #closing = new AbortController();
  #active = false;
  #running = false;
  #warnedMissing = false;

  constructor(options: StopPollerOptions) {
    this.#options = options;
  }

  /** Poll while `active` (the worker holds at least one job). */
  setActive(active: boolean): void {
    this.#active = active;
    if (active && !this.#running && !this.#closing.signal.aborted) {
      this.#running = true;
      void this.#loop();
    }
  }

  /** Stop polling now, aborting a poll in flight. */
  close(): void {
    this.#active = false;
    this.#closing.abort();
  }

  async #loop(): Promise<void> {
    const { http, url, pollTimeoutMs, logger } = this.#options;
    const signal = this.#closing.signal;
    let failures = 0;
    for (;;) {
      // Decide and clear #running in the same tick, so setActive(true) never finds a loop that is about to end.
      if (!this.#active || signal.aborted) {
        this.#running = false;
        return;
      }
      let wait = 0;
      try {
        const answer = await http.get(url, { signal, timeoutMs: pollTimeoutMs });
        if (answer.status === 204 || (answer.status >= 200 && answer.status < 300 && answer.text.trim() === '')) {
          failures = 0;
        } else if (answer.status >= 200 && answer.status < 300) {
          failures = 0;
          this.#deliver(answer.text);
        } else if (answer.status === 404 || answer.status === 405 || answer.status === 501) {
          if (!this.#warnedMissing) {
            logger.warn({ url: urlForLog(url), status: answer.status }, 'the platform does not answer job-stop; stop requests will not reach running jobs');
            this.#warnedMissing = true;
          }
          wait = this.#options.backoff.maxMs;
        } else {
          failures++;
          wait = Math.max(answer.retryAfterMs ?? 0, backoffDelay(failures, this.#options.backoff));
          logger.warn({ url: urlForLog(url), status: answer.status, retryInMs: wait }, 'job-stop poll failed');
        }
      } catch (error) {
        if (signal.aborted) continue;
        // The poll's own bound: poll again at once, as after a 204.
        if (error instanceof RequestTimeoutError) continue;
        failures++;
        wait = backoffDelay(failures, this.#options.backoff);
        logger.warn({ url: urlForLog(url), err: error, retryInMs: wait }, 'job-stop poll failed');
      }
      await sleep(wait, signal, this.#options.clock);
    }
  }

  #deliver(text: string): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      this.#options.logger.warn({ body: text.slice(0, 200) }, 'job-stop answer is not JSON; ignored');
      return;
    }
    const parsed = StopAnswerSchema.safeParse(body);
    if (!parsed.success) {
      this.#options.logger.warn({ body: text.slice(0, 200) }, 'job-stop answer is not {"jobsToStop": [...]}; ignored');
      return;
    }
    for (const jobId of parsed.data.jobsToStop) {
      this.#options.onStop(jobId, parsed.data.reasons?.[jobId] ?? DEFAULT_STOP_REASON, parsed.data.attempts?.[jobId]);
    }
  }
}
