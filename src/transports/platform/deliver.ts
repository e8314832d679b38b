/**
 * @module transports/platform/deliver
 * Posts that must land (a job's result, its stream chunks): retried with p-retry on
 * network errors, timeouts, 5xx, 408 and 429, with exponential backoff and jitter,
 * until they land or the deadline passes. Only then, or when the platform refuses the
 * post with another 4xx (retrying cannot change its mind), does delivery reject, with
 * SW_RESULT_UNDELIVERED (`details.lastStatus` says which answer). A 409 whose body
 * has the code SW_STALE_ATTEMPT (the harness refusing a post of an older attempt of
 * the job) rejects at once with SW_STALE_ATTEMPT. The platform acknowledges a repeated
 * result as the same result, so retrying a post whose answer was lost is safe. The waits
 * between attempts run on the request's clock and end early when its `wake` fires: a
 * worker whose harness was gone retries at once when it can reach one again, not up to
 * `maxDelayMs` later (local/harness-gone.ts). A first attempt may go to a URL of its own
 * (`firstUrl`: a result post that also takes jobs, done-takes.ts); the retries go to `url`,
 * without the take, so that a retried post never hands out jobs a second time.
 */
import pRetry, { AbortError } from 'p-retry';
import { ServerlessWorkerError } from '../../job/index.js';
import { sleep, systemClock, type Clock } from '../../clock/index.js';
import { isRetryableStatus } from './retryable-status.js';
import type { HttpAnswer, PlatformHttp } from './http-client.js';
import { urlForLog } from './urls.js';

/** Retry settings of one kind of post. */
export interface DeliveryPolicy {
  /** Give up when this much time has passed since the first attempt, ms. */
  readonly deadlineMs: number;
  /** Wait before the first retry, ms; doubles each retry, times a random 1-2 (jitter). */
  readonly minDelayMs: number;
  /** Longest wait between two attempts, ms. */
  readonly maxDelayMs: number;
  /** One attempt's own timeout, ms (a new attempt is never started after the deadline). */
  readonly attemptTimeoutMs: number;
}

/** One failed attempt, for logs and counters. */
export interface FailedAttempt {
  readonly attempt: number;
  readonly error: Error;
  /** The HTTP status, when the server answered. */
  readonly status?: number;
}

export interface DeliveryRequest {
  readonly http: PlatformHttp;
  readonly url: string;
  /** The JSON body, serialized before the first attempt (so a serialization bug is not retried). */
  readonly body: string;
  readonly jobId: string;
  /** What is posted, for messages: `result`, `stream chunk 3`. */
  readonly what: string;
  readonly policy: DeliveryPolicy;
  /** Aborts the retries (the transport is closing and its drain time is over). */
  readonly signal: AbortSignal;
  /** Called after each failed attempt that will be retried. */
  readonly onRetry?: (failure: FailedAttempt) => void;
  /** Times the deadline, the Retry-After waits and the backoff between attempts; default the system clock. */
  readonly clock?: Clock;
  /** Ends a wait between two attempts early (the next attempt starts at once); default none. */
  readonly wake?: RetryWake;
  /** The URL of the first attempt, when it differs from the retries' `url` (a result post carrying a take: done-takes.ts); default `url`. */
  readonly firstUrl?: string;
  /** Told the first attempt's outcome as soon as it is known, before any retry. */
  readonly onFirst?: (first: FirstAttempt) => void;
}

/** The outcome of a delivery's first attempt: an answer (of any status), or the error of a call that got none. */
export type FirstAttempt = { readonly answer: HttpAnswer } | { readonly error: unknown };

/**
 * Tells every delivery waiting between two attempts to try again now. A worker whose
 * harness was gone fires it when a connection to the harness opens again.
 */
export class RetryWake {
  #controller = new AbortController();

  /** Aborts at the next `wake()`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  wake(): void {
    const fired = this.#controller;
    this.#controller = new AbortController();
    fired.abort();
  }
}

/** The wait before attempt `failed + 1`: `minDelayMs` doubled per failed attempt after the first, times a random 1-2, at most `maxDelayMs`. */
function backoffMs(failed: number, policy: DeliveryPolicy): number {
  return Math.min(Math.round((1 + Math.random()) * policy.minDelayMs * 2 ** Math.max(0, failed - 1)), policy.maxDelayMs);
}

/** A non-2xx answer. */
export class PostStatusError extends Error {
  override readonly name = 'PostStatusError';
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  constructor(answer: HttpAnswer) {
    super(`HTTP ${answer.status}${answer.text ? `: ${answer.text.slice(0, 200)}` : ''}`);
    this.status = answer.status;
    this.retryAfterMs = answer.retryAfterMs;
  }
}

/** Whether an answer is the harness's refusal of a post from an older attempt of the job (409 SW_STALE_ATTEMPT). */
export function isStaleAttemptAnswer(answer: HttpAnswer): boolean {
  return answer.status === 409 && answer.text.includes('"SW_STALE_ATTEMPT"');
}

/** A delivered post: how many attempts it took and the answer that accepted it. */
export interface Delivered {
  readonly attempts: number;
  readonly answer: HttpAnswer;
}

/**
 * Post until it lands; resolves with the attempts and the accepting answer.
 * @throws ServerlessWorkerError SW_RESULT_UNDELIVERED, or SW_STALE_ATTEMPT when the harness refused an older attempt's post.
 */
export async function deliver(request: DeliveryRequest): Promise<Delivered> {
  const { http, url, body, policy, signal } = request;
  const startedAt = (request.clock ?? systemClock).now();
  // The first attempt outside p-retry: almost every post lands at once, and p-retry's
  // operation, options and closures per post were a share of a no-op job's CPU. A first
  // attempt that failed goes through p-retry as its attempt 1, so the retries, their
  // backoff and the errors are those of a delivery made wholly by p-retry.
  let first: FirstAttempt;
  try {
    first = { answer: await http.post(request.firstUrl ?? url, body, { signal, timeoutMs: policy.attemptTimeoutMs }) };
  } catch (error) {
    first = { error };
  }
  request.onFirst?.(first);
  if ('answer' in first && first.answer.status >= 200 && first.answer.status < 300) return { attempts: 1, answer: first.answer };
  return retryDelivery(request, first, startedAt);
}

/** The delivery after a first attempt that did not land: that attempt's outcome counts as p-retry's attempt 1. */
async function retryDelivery(request: DeliveryRequest, first: FirstAttempt, startedAt: number): Promise<Delivered> {
  const { http, url, body, policy, signal } = request;
  const clock = request.clock ?? systemClock;
  let attempts = 0;
  let lastStatus: number | undefined;
  let stale: HttpAnswer | undefined;
  try {
    const answer = await pRetry(
      async () => {
        attempts++;
        let answer: HttpAnswer;
        if (attempts > 1) answer = await http.post(url, body, { signal, timeoutMs: policy.attemptTimeoutMs });
        else if ('answer' in first) answer = first.answer;
        else throw first.error;
        if (answer.status >= 200 && answer.status < 300) return answer;
        lastStatus = answer.status;
        if (isStaleAttemptAnswer(answer)) stale = answer;
        const error = new PostStatusError(answer);
        throw isRetryableStatus(answer.status) ? error : new AbortError(error);
      },
      {
        retries: Number.POSITIVE_INFINITY,
        // No wait of p-retry's own: the backoff is waited below, where a wake can end it.
        minTimeout: 0,
        maxTimeout: 0,
        maxRetryTime: Math.max(0, policy.deadlineMs - (clock.now() - startedAt)),
        signal,
        onFailedAttempt: async ({ error, attemptNumber }) => {
          const status = error instanceof PostStatusError ? error.status : undefined;
          if (status === undefined) lastStatus = undefined;
          const left = policy.deadlineMs - (clock.now() - startedAt);
          if (left <= 0 || signal.aborted) return;
          request.onRetry?.({ attempt: attemptNumber, error, ...(status !== undefined ? { status } : {}) });
          const waitSignal = request.wake ? AbortSignal.any([signal, request.wake.signal]) : signal;
          // Honour the server's Retry-After (within the deadline) before the backoff.
          if (error instanceof PostStatusError && error.retryAfterMs !== undefined) {
            await sleep(Math.min(error.retryAfterMs, left, policy.maxDelayMs), waitSignal, clock);
          }
          if (waitSignal.aborted) return;
          await sleep(Math.min(backoffMs(attemptNumber, policy), policy.deadlineMs - (clock.now() - startedAt)), waitSignal, clock);
        },
      },
    );
    return { attempts, answer };
  } catch (error) {
    if (stale !== undefined) {
      throw new ServerlessWorkerError(
        'SW_STALE_ATTEMPT',
        `The ${request.what} of job ${request.jobId} was refused: it belongs to an attempt of the job that is no longer current (${stale.text.slice(0, 200)})`,
        { jobId: request.jobId, what: request.what },
      );
    }
    const elapsed = Math.round(clock.now() - startedAt);
    const cause = error instanceof Error ? error.message : String(error);
    const why = signal.aborted
      ? 'the worker was shutting down'
      : lastStatus !== undefined && !isRetryableStatus(lastStatus)
        ? `the platform refused it with HTTP ${lastStatus}`
        : `the deadline of ${policy.deadlineMs} ms passed`;
    throw new ServerlessWorkerError(
      'SW_RESULT_UNDELIVERED',
      `The ${request.what} of job ${request.jobId} could not be posted to ${urlForLog(url)}: ${why} after ${attempts} attempt(s) in ${elapsed} ms (last error: ${cause})`,
      { jobId: request.jobId, what: request.what, attempts, elapsedMs: elapsed, ...(lastStatus !== undefined ? { lastStatus } : {}) },
      { cause: error },
    );
  }
}
