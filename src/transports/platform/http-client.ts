/**
 * @module transports/platform/http-client
 * The one HTTP client of the platform transport: a single undici Agent with keep-alive
 * for every call of the main thread (take, stop poll, results, chunks, progress), so
 * that a busy worker reuses a few warm connections instead of opening one per post.
 * Every call carries the bare API key as `Authorization` (no `Bearer `, as the
 * platform expects) and is bounded by its own timeout on top of the caller's signal.
 */
import { Agent, request } from 'undici';
import { RUNTIME_VERSION } from '../../version.js';

/** An answer read in full: status, content type and body text. */
export interface HttpAnswer {
  readonly status: number;
  /** Lower-cased media type without parameters; '' when absent. */
  readonly contentType: string;
  readonly text: string;
  /** Retry-After in ms, when the server sent one (429, 503). */
  readonly retryAfterMs?: number;
}

/** A call did not answer within its own timeout (not the caller's abort). */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

export interface CallOptions {
  /** The caller's abort (shutdown, a take aborted by the runtime). */
  readonly signal?: AbortSignal;
  /** This call's own bound, ms. */
  readonly timeoutMs: number;
}

export interface PlatformHttpOptions {
  /** Sent bare as `Authorization`; none when undefined. */
  readonly apiKey?: string;
  /** Idle keep-alive sockets close after this, ms; default 30 000 (the server's hint wins when shorter). */
  readonly keepAliveTimeoutMs?: number;
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

export class PlatformHttp {
  readonly #agent: Agent;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #jsonHeaders: Readonly<Record<string, string>>;

  constructor(options: PlatformHttpOptions = {}) {
    const keepAlive = options.keepAliveTimeoutMs ?? 30_000;
    this.#agent = new Agent({
      keepAliveTimeout: keepAlive,
      keepAliveMaxTimeout: Math.max(keepAlive, 600_000),
      // Our own per-call timeout bounds each call; undici's 300 s defaults would cut a long poll configured longer.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.#headers = {
      'user-agent': `serverless-worker/${RUNTIME_VERSION}`,
      accept: 'application/json',
      ...(options.apiKey !== undefined ? { authorization: options.apiKey } : {}),
    };
    this.#jsonHeaders = { ...this.#headers, 'content-type': 'application/json' };
  }

  /** `GET url`. Rejects on network errors, its timeout (RequestTimeoutError) or the caller's abort. */
  get(url: string, options: CallOptions): Promise<HttpAnswer> {
    return this.#call(url, 'GET', undefined, options);
  }

  /** `POST url` with a JSON body already serialized. */
  post(url: string, json: string, options: CallOptions): Promise<HttpAnswer> {
    return this.#call(url, 'POST', json, options);
  }

  /** Close idle connections and wait for calls in flight; destroys what is left after `graceMs` (default 1 000). */
  async close(graceMs = 1_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const closed = this.#agent.close().then(() => true);
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, graceMs, false)));
    const inTime = await Promise.race([closed, late]);
    clearTimeout(timer);
    if (!inTime) await this.#agent.destroy().catch(() => {});
  }

  async #call(url: string, method: 'GET' | 'POST', body: string | undefined, options: CallOptions): Promise<HttpAnswer> {
    const controller = new AbortController();
    // Built only when the timer fires: an Error captures a stack, and most calls answer in time.
    let timeout: RequestTimeoutError | undefined;
    const timer = setTimeout(() => controller.abort((timeout = new RequestTimeoutError(options.timeoutMs))), options.timeoutMs);
    const onAbort = (): void => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await request(url, {
        dispatcher: this.#agent,
        method,
        headers: body === undefined ? this.#headers : this.#jsonHeaders,
        ...(body !== undefined ? { body } : {}),
        signal: controller.signal,
      });
      const text = await response.body.text();
      const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      return {
        status: response.statusCode,
        contentType: headerText(response.headers['content-type']).split(';')[0]?.trim().toLowerCase() ?? '',
        text,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      };
    } catch (error) {
      // undici rejects with the abort reason; name our own timeout whatever form it took.
      if (timeout !== undefined && controller.signal.reason === timeout && !options.signal?.aborted) throw timeout;
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}
