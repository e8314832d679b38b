/**
 * @module transports/platform/deliver
 * Posts that must land (a job's result, its stream chunks): retried with p-retry on
 * network errors, timeouts, 5xx, 408 and 429, with exponential backoff and jitter,
 * until they land or the deadline passes. Only then, or when the platform refuses the
 * post with another 4xx (retrying cannot change its mind), does delivery reject, with
 * SW_RESULT_UNDELIVERED. The platform acknowledges a repeated result as the same
 * result, so retrying a post whose answer was lost is safe.
 */
import pRetry, { AbortError } from 'p-retry';
import { ServerlessWorkerError } from '../../job/index.js';
import { isRetryableStatus, sleep } from './backoff.js';
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

/** Post until it lands; resolves with the number of attempts. @throws ServerlessWorkerError SW_RESULT_UNDELIVERED */
export async function deliver(request: DeliveryRequest): Promise<number> {
  const { http, url, body, policy, signal } = request;
  const startedAt = performance.now();
  let attempts = 0;
  let lastStatus: number | undefined;
  try {
    await pRetry(
      async () => {
        attempts++;
        const answer = await http.post(url, body, { signal, timeoutMs: policy.attemptTimeoutMs });
        if (answer.status >= 200 && answer.status < 300) return;
        lastStatus = answer.status;
        const error = new PostStatusError(answer);
        throw isRetryableStatus(answer.status) ? error : new AbortError(error);
      },
      {
        retries: Number.POSITIVE_INFINITY,
        factor: 2,
        minTimeout: policy.minDelayMs,
        maxTimeout: policy.maxDelayMs,
        randomize: true,
        maxRetryTime: policy.deadlineMs,
        signal,
        onFailedAttempt: async ({ error, attemptNumber }) => {
          const status = error instanceof PostStatusError ? error.status : undefined;
          if (status === undefined) lastStatus = undefined;
          const left = policy.deadlineMs - (performance.now() - startedAt);
          if (left <= 0 || signal.aborted) return;
          request.onRetry?.({ attempt: attemptNumber, error, ...(status !== undefined ? { status } : {}) });
          // Honour the server's Retry-After (within the deadline) before p-retry's own backoff.
          if (error instanceof PostStatusError && error.retryAfterMs !== undefined) {
            await sleep(Math.min(error.retryAfterMs, left, policy.maxDelayMs), signal);
          }
        },
      },
    );
    return attempts;
  } catch (error) {
    const elapsed = Math.round(performance.now() - startedAt);
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
