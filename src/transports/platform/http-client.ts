/**
 * @module transports/platform/http-client
 * The one HTTP client of the platform transport: Node's own `node:http` / `node:https`
 * with one keep-alive Agent per scheme for every call of the main thread (take, stop
 * poll, results, chunks, progress), so that a busy worker reuses a few warm connections
 * instead of opening one per post. Every call carries the bare API key as
 * `Authorization` (no `Bearer `, as the platform expects) and is bounded by its own
 * timeout on top of the caller's signal.
 *
 * Why not undici (the harness and the management client use it): on the platform path
 * it was the largest import of a worker (about 20 MB of RSS and 110 modules before the
 * first take, see bench/README.md), for calls that node:http makes as well. Idle sockets
 * close after `keepAliveTimeoutMs`, or a second before the server's `Keep-Alive:
 * timeout=` hint when that is shorter (Node's Agent reads it).
 */
import type { Agent as HttpAgent, IncomingMessage, OutgoingHttpHeaders, RequestOptions } from 'node:http';
import type * as Https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { systemClock, type Clock, type TimerHandle } from '../../clock/index.js';
import { RUNTIME_VERSION } from '../../version.js';
import { STREAM_BATCH_HEADER, STREAM_ORDER_HEADER } from '../../job/stream-order.js';
import { TAKE_ON_DONE_HEADER } from '../../job/take-on-done.js';

/** An answer read in full: status, content type and body text. */
export interface HttpAnswer {
  readonly status: number;
  /** Lower-cased media type without parameters; '' when absent. */
  readonly contentType: string;
  readonly text: string;
  /** Retry-After in ms, when the server sent one (429, 503). */
  readonly retryAfterMs?: number;
  /** The harness's `x-sw-stream-order` header, when it sent one (stream-order.ts). */
  readonly streamOrder?: string;
  /** The harness's `x-sw-stream-batch` header, when it sent one (stream-order.ts). */
  readonly streamBatch?: string;
  /** The harness's `x-sw-take-on-done` header, when it sent one (take-on-done.ts). */
  readonly takeOnDone?: string;
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
  /** Most sockets open at once per scheme; a call past it waits for one (the Agent's queue); default MAX_CONNECTIONS. */
  readonly maxConnections?: number;
  /** Times each call's bound and the close grace, and dates Retry-After; default the system clock. */
  readonly clock?: Clock;
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = systemClock.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** Where a request goes: the scheme, host and port of its origin, and its path with the query. */
interface Target {
  readonly https: boolean;
  readonly origin: Readonly<RequestOptions>;
  readonly path: string;
}

/** The origin of an http(s) URL: scheme, optional credentials, host and port. */
const ORIGIN = /^https?:\/\/[^/?#]*/;
/** A path and query node:http sends as they are: printable ASCII without spaces or a fragment (what our URLs are, job ids percent-encoded). */
const PLAIN_PATH = /^[\x21\x22\x24-\x7e]*$/;

/**
 * Where `url` goes. The origin is parsed once per origin (a worker calls one or two),
 * not per call as `request(url)` does; a URL with credentials, a fragment, or a path
 * that needs WHATWG normalising is parsed whole as before.
 */
function targetOf(url: string, origins: Map<string, Readonly<RequestOptions>>): Target {
  const https = url.startsWith('https:');
  const originText = ORIGIN.exec(url)?.[0];
  const rest = originText === undefined ? '' : url.slice(originText.length);
  if (originText !== undefined && originText.length > (https ? 8 : 7) && !originText.includes('@') && PLAIN_PATH.test(rest)) {
    let origin = origins.get(originText);
    if (origin === undefined) {
      const { protocol, hostname, port } = urlToHttpOptions(new URL(originText));
      origin = Object.freeze({ protocol, hostname, ...(port !== undefined && port !== '' ? { port } : {}) });
      origins.set(originText, origin);
    }
    return { https, origin, path: rest.startsWith('/') ? rest : `/${rest}` };
  }
  const whole = urlToHttpOptions(new URL(url));
  return { https, origin: whole, path: whole.path ?? '/' };
}

/**
 * One abort listener per signal, for every call under it: the take signal and the
 * close signal live as long as the worker, and an addEventListener/removeEventListener
 * pair per call was a measurable share of a no-op job.
 */
class AbortFanOut {
  readonly #calls = new WeakMap<AbortSignal, Set<() => void>>();

  add(signal: AbortSignal, onAbort: () => void): void {
    let calls = this.#calls.get(signal);
    if (calls === undefined) {
      const set = new Set<() => void>();
      calls = set;
      this.#calls.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          for (const call of [...set]) call();
          set.clear();
        },
        { once: true },
      );
    }
    calls.add(onAbort);
  }

  delete(signal: AbortSignal, onAbort: () => void): void {
    this.#calls.get(signal)?.delete(onAbort);
  }
}

/**
 * Sockets to the platform open at once, per scheme, unless `maxConnections` says otherwise. A
 * worker at concurrency 256 opened about 500 without a bound (a post per finished job, each on
 * a socket of its own while the others were busy), and the C library kept what their buffers
 * had taken: 70 s after 20 000 jobs its RSS was 102-104 MiB on Node 24, 94-99 with 32 sockets,
 * the jobs no slower (bench/README, issue 46 item 5, 2026-12-05). The take's and the stop
 * poll's long polls hold one each.
 */
export const MAX_CONNECTIONS = 32;

/**
 * node:http, and node:https the first time a URL needs it: a worker of the local API talks plain
 * HTTP over loopback, and node:https brings the TLS stack (see
 * test/architecture/builtin-imports.unit.test.ts for why neither is an `import`).
 */
const plainHttp = process.getBuiltinModule('node:http');
let tlsHttp: typeof Https | undefined;
function httpsModule(): typeof Https {
  return (tlsHttp ??= process.getBuiltinModule('node:https'));
}

export class PlatformHttp {
  readonly #keepAliveMs: number;
  readonly #maxSockets: number;
  readonly #clock: Clock;
  #http: HttpAgent | undefined;
  #https: Https.Agent | undefined;
  readonly #headers: Readonly<OutgoingHttpHeaders>;
  /** Calls not settled yet; close() waits for them (within its grace). */
  #inFlight = 0;
  #onDrained: (() => void) | undefined;
  #closed = false;
  readonly #origins = new Map<string, Readonly<RequestOptions>>();
  readonly #aborts = new AbortFanOut();

  constructor(options: PlatformHttpOptions = {}) {
    this.#keepAliveMs = options.keepAliveTimeoutMs ?? 30_000;
    this.#maxSockets = options.maxConnections ?? MAX_CONNECTIONS;
    this.#clock = options.clock ?? systemClock;
    this.#headers = {
      'user-agent': `serverless-worker/${RUNTIME_VERSION}`,
      accept: 'application/json',
      ...(options.apiKey !== undefined ? { authorization: options.apiKey } : {}),
    };
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
    this.#closed = true;
    if (this.#inFlight > 0) {
      let timer: TimerHandle | undefined;
      await new Promise<void>((resolve) => {
        timer = this.#clock.setTimer(graceMs, resolve, { keepAlive: true });
        this.#onDrained = resolve;
      });
      timer?.cancel();
      this.#onDrained = undefined;
    }
    this.#http?.destroy();
    this.#https?.destroy();
  }

  #agent(https: boolean): HttpAgent {
    // `timeout`: a free socket idle this long is closed (the server's shorter hint wins).
    const options = { keepAlive: true, timeout: this.#keepAliveMs, scheduling: 'lifo', maxSockets: this.#maxSockets } as const;
    if (https) return (this.#https ??= new (httpsModule().Agent)(options));
    return (this.#http ??= new plainHttp.Agent(options));
  }

  #call(url: string, method: 'GET' | 'POST', body: string | undefined, options: CallOptions): Promise<HttpAnswer> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#closed) return Promise.reject(new Error('the platform HTTP client is closed'));
    return new Promise<HttpAnswer>((resolve, reject) => {
      const target = targetOf(url, this.#origins);
      const { https } = target;
      const headers: OutgoingHttpHeaders =
        body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      let settled = false;
      const settle = (error: unknown, answer?: HttpAnswer): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        if (signal) this.#aborts.delete(signal, onAbort);
        if (--this.#inFlight === 0) this.#onDrained?.();
        if (answer) resolve(answer);
        else reject(error);
      };
      const onResponse = (response: IncomingMessage): void => {
        // Buffers decoded once at the end: setEncoding() made a StringDecoder per answer, and answers are small.
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('error', (error) => settle(error));
        response.on('aborted', () => settle(new Error(`the connection closed before the answer of ${method} ended`)));
        response.on('end', () => {
          const text = parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts).toString('utf8');
          const retryAfterMs = parseRetryAfter(response.headers['retry-after'], this.#clock.now());
          const streamOrder = response.headers[STREAM_ORDER_HEADER];
          const streamBatch = response.headers[STREAM_BATCH_HEADER];
          const takeOnDone = response.headers[TAKE_ON_DONE_HEADER];
          settle(undefined, {
            status: response.statusCode ?? 0,
            contentType: headerText(response.headers['content-type']).split(';')[0]?.trim().toLowerCase() ?? '',
            text,
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
            ...(streamOrder !== undefined ? { streamOrder: headerText(streamOrder) } : {}),
            ...(streamBatch !== undefined ? { streamBatch: headerText(streamBatch) } : {}),
            ...(takeOnDone !== undefined ? { takeOnDone: headerText(takeOnDone) } : {}),
          });
        });
      };
      const send = https ? httpsModule().request : plainHttp.request;
      const request = send({ ...target.origin, path: target.path, method, headers, agent: this.#agent(https) }, onResponse);
      // Built only when the timer fires: an Error captures a stack, and most calls answer in time.
      const timer = this.#clock.setTimer(
        options.timeoutMs,
        () => {
          const timeout = new RequestTimeoutError(options.timeoutMs);
          settle(timeout);
          request.destroy(timeout);
        },
        { keepAlive: true },
      );
      function onAbort(): void {
        settle(signal?.reason);
        request.destroy();
      }
      if (signal) this.#aborts.add(signal, onAbort);
      this.#inFlight++;
      request.on('error', (error) => settle(error));
      request.end(body);
    });
  }
}
