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
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { systemClock, type Clock, type TimerHandle } from '../../clock/index.js';
import { RUNTIME_VERSION } from '../../version.js';
import { STREAM_BATCH_HEADER, STREAM_ORDER_HEADER } from '../../job/stream-order.js';

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

/** What an abort fan-out calls: a call in flight. */
interface Abortable {
  abort(): void;
}

/**
 * One abort listener per signal, for every call under it: the take signal and the
 * close signal live as long as the worker, and an addEventListener/removeEventListener
 * pair per call was a measurable share of a no-op job.
 */
class AbortFanOut {
  readonly #calls = new WeakMap<AbortSignal, Set<Abortable>>();

  add(signal: AbortSignal, call: Abortable): void {
    let calls = this.#calls.get(signal);
    if (calls === undefined) {
      const set = new Set<Abortable>();
      calls = set;
      this.#calls.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          for (const each of [...set]) each.abort();
          set.clear();
        },
        { once: true },
      );
    }
    calls.add(call);
  }

  delete(signal: AbortSignal, call: Abortable): void {
    this.#calls.get(signal)?.delete(call);
  }
}

export class PlatformHttp {
  readonly #keepAliveMs: number;
  readonly #clock: Clock;
  #http: HttpAgent | undefined;
  #https: HttpsAgent | undefined;
  readonly #headers: Readonly<OutgoingHttpHeaders>;
  /** Calls not settled yet; close() waits for them (within its grace). */
  #inFlight = 0;
  #onDrained: (() => void) | undefined;
  #closed = false;
  readonly #origins = new Map<string, Readonly<RequestOptions>>();
  readonly #aborts = new AbortFanOut();
  /** What a call does once it settled: one function for every call of this client. */
  readonly #callSettled = (call: PendingCall): void => {
    if (call.signal) this.#aborts.delete(call.signal, call);
    if (--this.#inFlight === 0) this.#onDrained?.();
  };

  constructor(options: PlatformHttpOptions = {}) {
    this.#keepAliveMs = options.keepAliveTimeoutMs ?? 30_000;
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
    if (https) return (this.#https ??= new HttpsAgent({ keepAlive: true, timeout: this.#keepAliveMs, scheduling: 'lifo' }));
    return (this.#http ??= new HttpAgent({ keepAlive: true, timeout: this.#keepAliveMs, scheduling: 'lifo' }));
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
      const send = https ? httpsRequest : httpRequest;
      const request = send({ ...target.origin, path: target.path, method, headers, agent: this.#agent(https) });
      const call = new PendingCall(method, options, this.#clock, this.#callSettled, resolve, reject);
      call.attach(request);
      if (signal) this.#aborts.add(signal, call);
      this.#inFlight++;
      request.end(body);
    });
  }
}

/** The call a request or an answer belongs to, set on it so that one listener serves every call. */
const CALL = Symbol('platform call');
type WithCall<T> = T & { [CALL]?: PendingCall };

/**
 * One call in flight: its state in one object, read by listeners that every call shares,
 * so that a call makes one closure (its timer's) instead of one per event. What a post
 * allocates lives until its answer: at concurrency 256 much of it outlived the young
 * generation (bench/README, issue 46 item 5).
 */
class PendingCall implements Abortable {
  readonly signal: AbortSignal | undefined;
  readonly #method: string;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #onSettled: (call: PendingCall) => void;
  readonly #resolve: (answer: HttpAnswer) => void;
  readonly #reject: (error: unknown) => void;
  #request: ClientRequest | undefined;
  #timer: TimerHandle | undefined;
  /** The answer's body so far: decoded once at the end (setEncoding() made a StringDecoder per answer, and answers are small). */
  readonly #parts: Buffer[] = [];
  #settled = false;

  constructor(
    method: string,
    options: CallOptions,
    clock: Clock,
    onSettled: (call: PendingCall) => void,
    resolve: (answer: HttpAnswer) => void,
    reject: (error: unknown) => void,
  ) {
    this.signal = options.signal;
    this.#method = method;
    this.#timeoutMs = options.timeoutMs;
    this.#clock = clock;
    this.#onSettled = onSettled;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** Listen to `request` and start the call's own timeout. */
  attach(request: WithCall<ClientRequest>): void {
    request[CALL] = this;
    this.#request = request;
    request.once('response', PendingCall.#onResponse);
    request.on('error', PendingCall.#onError);
    this.#timer = this.#clock.setTimer(this.#timeoutMs, () => this.#timeOut(), { keepAlive: true });
  }

  /** The caller's signal aborted. */
  abort(): void {
    this.#settle(this.signal?.reason);
    this.#request?.destroy();
  }

  #timeOut(): void {
    // Built only when the timer fires: an Error captures a stack, and most calls answer in time.
    const timeout = new RequestTimeoutError(this.#timeoutMs);
    this.#settle(timeout);
    this.#request?.destroy(timeout);
  }

  #settle(error: unknown, answer?: HttpAnswer): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#timer?.cancel();
    this.#onSettled(this);
    if (answer) this.#resolve(answer);
    else this.#reject(error);
  }

  #end(response: IncomingMessage): void {
    const parts = this.#parts;
    const text = parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts).toString('utf8');
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], this.#clock.now());
    const streamOrder = response.headers[STREAM_ORDER_HEADER];
    const streamBatch = response.headers[STREAM_BATCH_HEADER];
    this.#settle(undefined, {
      status: response.statusCode ?? 0,
      contentType: headerText(response.headers['content-type']).split(';')[0]?.trim().toLowerCase() ?? '',
      text,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(streamOrder !== undefined ? { streamOrder: headerText(streamOrder) } : {}),
      ...(streamBatch !== undefined ? { streamBatch: headerText(streamBatch) } : {}),
    });
  }

  // The listeners: `this` is the request or the answer that emitted the event.
  static #onError(this: WithCall<ClientRequest | IncomingMessage>, error: Error): void {
    const call = this[CALL];
    if (call) call.#settle(error);
  }

  static #onResponse(this: WithCall<ClientRequest>, response: WithCall<IncomingMessage>): void {
    response[CALL] = this[CALL];
    response.on('data', PendingCall.#onData);
    response.on('error', PendingCall.#onError);
    response.on('aborted', PendingCall.#onAborted);
    response.on('end', PendingCall.#onEnd);
  }

  static #onData(this: WithCall<IncomingMessage>, part: Buffer): void {
    const call = this[CALL];
    if (call) call.#parts.push(part);
  }

  static #onAborted(this: WithCall<IncomingMessage>): void {
    const call = this[CALL];
    if (call) call.#settle(new Error(`the connection closed before the answer of ${call.#method} ended`));
  }

  static #onEnd(this: WithCall<IncomingMessage>): void {
    const call = this[CALL];
    if (call) call.#end(this);
  }
}
