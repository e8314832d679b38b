/**
 * @module transports/platform/take-loop
 * The job-take long poll of the platform transport (worker-protocol.md section 1):
 * `GET <take>&job_in_progress=0|1`, or `<take-batch>&batch_size=N&...` when the runtime
 * has room for more than one job; bounded by `pollTimeoutMs` (90 s) and polled again at
 * once after its own timeout, 204, 400, an empty body or a non-JSON answer (after
 * `emptyPollGapMs`); 429 and failures back off exponentially with jitter; 401/403 are
 * reported once (key-refused.ts). The answer that hands out jobs goes to `onJobs` first:
 * its headers say how their stream chunks may be posted (chunk-posts.ts). Where the platform
 * advertised it, a take first rides on a result post waiting to go (done-takes.ts), and
 * polls only when that handed out no job.
 */
import type { Logger } from 'pino';
import type { Job } from '../../job/index.js';
import { backoffDelay, sleep, type BackoffPolicy, type Clock } from '../../clock/index.js';
import { RequestTimeoutError, type HttpAnswer, type PlatformHttp } from './http-client.js';
import { isKeyRefused, type KeyRefusedReporter } from './key-refused.js';
import type { PlatformTransportSettings } from './options.js';
import type { JoinedTake } from './done-takes.js';
import { readTakeAnswer, type TakeOutcome } from './take-answer.js';
import { urlForLog, type PlatformUrls } from './urls.js';

export interface TakeLoopOptions {
  readonly http: PlatformHttp;
  readonly urls: PlatformUrls;
  readonly settings: PlatformTransportSettings;
  readonly backoff: BackoffPolicy;
  readonly keyRefused: KeyRefusedReporter;
  readonly logger: Logger;
  readonly clock: Clock;
  /** An answer that handed out jobs, before they are returned. */
  readonly onJobs: (answer: HttpAnswer) => void;
  /** A take on a result post waiting to go (done-takes.ts): its jobs, or undefined to take as usual. */
  readonly joinDone?: (max: number, inProgress: boolean) => Promise<JoinedTake | undefined>;
}

export class TakeLoop {
  readonly #options: TakeLoopOptions;

  constructor(options: TakeLoopOptions) {
    this.#options = options;
  }

  /** Take up to `max` jobs (long poll); answers [] once `signal` aborts. */
  async take(max: number, inProgress: boolean, signal: AbortSignal): Promise<Job[]> {
    const { http, urls, settings, backoff, logger, clock } = this.#options;
    const joinDone = this.#options.joinDone;
    if (joinDone !== undefined && !signal.aborted) {
      const joined = await joinDone(max, inProgress);
      if (joined !== undefined && joined.jobs.length > 0) {
        this.#options.onJobs(joined.answer);
        if (joined.invalid > 0) logger.error({ skipped: joined.invalid }, 'job-done answer handed out job(s) without id or input; skipped');
        return joined.jobs;
      }
    }
    let failures = 0;
    while (!signal.aborted) {
      const url = (max > 1 ? urls.takeBatch(max, inProgress) : undefined) ?? urls.take(inProgress);
      const startedAt = clock.now();
      let answer: HttpAnswer;
      try {
        answer = await http.get(url, { signal, timeoutMs: settings.pollTimeoutMs });
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof RequestTimeoutError) continue; // the long poll's own bound: poll again
        failures++;
        const wait = backoffDelay(failures, backoff);
        logger.warn({ url: urlForLog(url), err: error, retryInMs: wait }, 'job take failed');
        await sleep(wait, signal, clock);
        continue;
      }
      const outcome = readTakeAnswer(answer);
      if (outcome.kind === 'jobs' && outcome.jobs.length > 0) this.#options.onJobs(answer);
      if (outcome.kind === 'error' && isKeyRefused(outcome.status)) {
        this.#options.keyRefused.refusedBy('job-take', outcome.status);
        await sleep(backoff.maxMs, signal, clock);
        continue;
      }
      if (this.#options.keyRefused.refused) this.#options.keyRefused.accepted();
      if (outcome.kind === 'jobs' && outcome.jobs.length > 0) {
        if (outcome.invalid > 0) logger.error({ url: urlForLog(url), skipped: outcome.invalid }, 'job take answered job(s) without id or input; skipped');
        return outcome.jobs;
      }
      failures = await this.#waitAfter(outcome, url, failures, startedAt, signal);
    }
    return [];
  }

  /** The wait before the next poll after an answer without jobs; answers the failures counted so far. */
  async #waitAfter(outcome: TakeOutcome, url: string, failures: number, startedAt: number, signal: AbortSignal): Promise<number> {
    const { settings, backoff, logger, clock } = this.#options;
    switch (outcome.kind) {
      case 'jobs':
        if (outcome.invalid > 0) logger.error({ url: urlForLog(url), skipped: outcome.invalid }, 'job take answered job(s) without id or input; skipped');
        await sleep(settings.emptyPollGapMs - (clock.now() - startedAt), signal, clock);
        return failures;
      case 'none':
        if (outcome.note !== undefined) logger.debug({ note: outcome.note }, 'job take answer read as "no job"');
        await sleep(settings.emptyPollGapMs - (clock.now() - startedAt), signal, clock);
        return 0;
      case 'backoff': {
        const wait = Math.min(backoff.maxMs, Math.max(outcome.retryAfterMs ?? 0, backoffDelay(failures + 1, backoff)));
        logger.info({ retryInMs: wait }, 'job take answered 429: backing off');
        await sleep(wait, signal, clock);
        return failures + 1;
      }
      case 'error': {
        const wait = backoffDelay(failures + 1, backoff);
        logger.warn({ url: urlForLog(url), status: outcome.status, body: outcome.text, retryInMs: wait }, 'job take failed');
        await sleep(wait, signal, clock);
        return failures + 1;
      }
    }
  }
}
