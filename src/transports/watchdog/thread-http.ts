/**
 * @module transports/watchdog/thread-http
 * HTTP from the watchdog thread with Node's own node:http / node:https and one
 * keep-alive agent: not the global fetch and not undici, which would load a second
 * copy of an HTTP client into the thread (about 8 MB of a worker's idle RSS for one
 * GET every few seconds). Both taken with `process.getBuiltinModule`, node:https only for an
 * https URL: see architecture/builtin-imports.unit.test.ts.
 */
import type * as http from 'node:http';
import { backoffDelay, sleep } from '../../clock/index.js';
import { isRetryableStatus } from '../platform/retryable-status.js';
import type { PostRetrySettings } from './thread-protocol.js';

/** An answer, or a failure without one. */
export type CallOutcome = { readonly status: number } | { readonly error: string };

export class ThreadHttp {
  readonly #agents = new Map<string, http.Agent>();
  readonly #userAgent: string;
  readonly #apiKey: string | undefined;

  constructor(version: string, apiKey: string | undefined) {
    this.#userAgent = `serverless-worker/${version}`;
    this.#apiKey = apiKey;
  }

  /** One call bounded by `timeoutMs`; the body, when given, is JSON. Never rejects. */
  call(method: 'GET' | 'POST', url: string, timeoutMs: number, body?: string): Promise<CallOutcome> {
    const client = url.startsWith('https:') ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
    let agent = this.#agents.get(url.startsWith('https:') ? 'https' : 'http');
    if (!agent) {
      agent = new client.Agent({ keepAlive: true, maxSockets: 2 });
      this.#agents.set(url.startsWith('https:') ? 'https' : 'http', agent);
    }
    const headers: Record<string, string> = { 'user-agent': this.#userAgent, accept: '*/*' };
    if (this.#apiKey !== undefined) headers.authorization = this.#apiKey;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (outcome: CallOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const describe = (error: unknown): string => String((error as Error | undefined)?.message ?? error);
      let request: http.ClientRequest;
      try {
        request = client.request(url, { method, headers, agent }, (response) => {
          response.on('error', (error) => settle({ error: describe(error) }));
          response.on('end', () => settle({ status: response.statusCode ?? 0 }));
          response.resume();
        });
      } catch (error) {
        settle({ error: describe(error) });
        return;
      }
      request.on('error', (error) => settle({ error: describe(error) }));
      timer = setTimeout(() => {
        settle({ error: `no answer within ${timeoutMs} ms` });
        request.destroy();
      }, timeoutMs);
      request.end(body);
    });
  }

  /**
   * POST until a 2xx answer, with the platform transport's rules: network errors,
   * timeouts, 5xx, 408 and 429 are retried with exponential backoff and jitter until
   * `retry.deadlineMs` has passed; another 4xx is final. Answers how it ended.
   */
  async postUntilLanded(url: string, body: string, retry: PostRetrySettings): Promise<{ delivered: boolean; attempts: number; last: string }> {
    const startedAt = performance.now();
    let attempts = 0;
    let last = '';
    for (;;) {
      attempts++;
      const outcome = await this.call('POST', url, retry.attemptTimeoutMs, body);
      if ('status' in outcome) {
        if (outcome.status >= 200 && outcome.status < 300) return { delivered: true, attempts, last: `HTTP ${outcome.status}` };
        last = `HTTP ${outcome.status}`;
        if (!isRetryableStatus(outcome.status)) return { delivered: false, attempts, last };
      } else {
        last = outcome.error;
      }
      const left = retry.deadlineMs - (performance.now() - startedAt);
      if (left <= 0) return { delivered: false, attempts, last };
      await sleep(Math.min(left, backoffDelay(attempts, { minMs: Math.max(1, retry.minDelayMs), maxMs: retry.maxDelayMs })));
    }
  }

  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}
