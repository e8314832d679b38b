/**
 * @module harness/queue-api/lean-runsync
 * POST /runsync of the common, well-formed request answered without fastify's request
 * path (issue 34): under `/runsync` load fastify's routing, hook chain, content-type
 * parser and reply were about a tenth of a busy `--serve-api` process's CPU samples
 * (bench/README, issue 34, third pass), for a request none of whose hooks has anything
 * to say.
 *
 * It takes a request only when every check fastify would run passes, and runs them in
 * fastify's order: the method and the exact path (`/v2/<endpoint>/runsync`, or
 * `/runsync` at the root of --serve-api; no query string, no trailing slash), the API
 * key, an endpoint this process knows and that was not deleted through /v1 (the
 * endpoint hooks have nothing to add), a JSON content type, a Content-Length under the
 * size from which bodies are checked off the loop, no Transfer-Encoding nor Expect, room
 * in the queue for the declared size, the rate limit, a server not closing. A request that fails any of them
 * is handed to fastify untouched (its body not read), which answers it as before: the
 * 401, 404, 413, 429 and 503 answers are fastify's own. Past that point it counts in
 * the rate limiter and the queue's reservations exactly as through the hooks, reads the
 * body, and runs the route's own steps (json-body.ts's checks and parser, the body's
 * validation, the input schema, submitAndWait); an error is answered as the server's
 * error handler answers it (status, Retry-After, JSON body with message and code), with
 * Connection: close after a body the parser refused, as fastify does.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { type Harness, isTerminal, RUNSYNC_WAIT_MS } from 'serverless-worker/internal';
import { rawRequestSignal } from '../http/client-signal.js';
import { toServerlessWorkerError, STORE_UNAVAILABLE_RETRY_AFTER_S } from '../http/error-reply.js';
import { checkBodyShape, RAW_INPUT_MIN_CHARS } from '../http/json-body.js';
import type { StoreOutage } from '../http/store-outage.js';
import type { RateGate } from '../http/rate-limit/rate-limit-hook.js';
import type { QueueApiContext } from './context.js';
import type { QueueRoomReservations } from './early-queue-room.js';
import { jobRequestOf } from './submit-routes.js';

const ENDPOINT_ID = /^[A-Za-z0-9._-]{1,128}$/;
const LENGTH = /^\d{1,15}$/;
const PREFIX = '/v2/';
const SUFFIX = '/runsync';
const JSON_TYPE = 'application/json; charset=utf-8';
/** The route's pattern, as the error handler's logging names it. */
const ROUTE_URL = '/v2/:endpointId/runsync';

export interface LeanRunsyncOptions {
  readonly context: QueueApiContext;
  /** The endpoint of --serve-api's root alias (`/runsync` at the root); undefined: none. */
  readonly rootEndpoint: string | undefined;
  /** The API key check of the server's hook; undefined: no key. */
  readonly apiKey: ((header: string | undefined) => boolean) | undefined;
  /** The rate limiter of the server's hook; undefined: --no-rate-limit. */
  readonly rateGate: RateGate | undefined;
  /** Whether the id was deleted through /v1 (unknown-endpoints.ts): then fastify answers. */
  readonly deleted: (endpointId: string) => boolean;
  /** The reservations of the submit routes' early queue room hook. */
  readonly queueRoom: QueueRoomReservations;
  /** fastify's JSON parser as json-body.ts uses it (prototype poisoning refused). */
  readonly parseJson: (text: string, done: (error: Error | null, body?: unknown) => void) => void;
  readonly logger: Logger;
  readonly storeOutage: StoreOutage | undefined;
}

/** What the lean path did, for tests: requests it took (answered by it, not by fastify). */
export interface LeanRunsyncStats {
  taken: number;
}

const statsByServer = new WeakMap<Server, LeanRunsyncStats>();

/** How many /runsync requests the lean path of `server` took and answered itself (tests: which path answered). */
export function leanRunsyncTaken(server: Server): number {
  return statsByServer.get(server)?.taken ?? 0;
}

/**
 * Put the lean path in front of fastify's request listener on `server` (app.server,
 * before it listens). Other servers fastify makes (a second address of `localhost`) keep
 * fastify alone, which answers the same.
 */
export function installLeanRunsync(server: Server, options: LeanRunsyncOptions): void {
  const [fastify, ...others] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (fastify === undefined || others.length > 0)
    throw new Error(`leanRunsync: expected fastify's one request listener, found ${server.listenerCount('request')}`);
  const stats: LeanRunsyncStats = { taken: 0 };
  statsByServer.set(server, stats);
  server.removeListener('request', fastify);
  const lean = new LeanRunsync(options, stats, fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => lean.listen(req, res));
}

/** The endpoint id of a lean /runsync path; undefined for any other URL. */
export function leanRunsyncEndpoint(url: string, rootEndpoint: string | undefined): string | undefined {
  if (url === SUFFIX) return rootEndpoint;
  if (!url.startsWith(PREFIX) || !url.endsWith(SUFFIX)) return undefined;
  const id = url.slice(PREFIX.length, url.length - SUFFIX.length);
  return ENDPOINT_ID.test(id) ? id : undefined;
}

/** Whether a content type is JSON as curl and the official clients send it. */
function isJsonType(type: string | undefined): boolean {
  if (type === undefined) return false;
  const lower = type.toLowerCase();
  return lower === 'application/json' || lower === 'application/json; charset=utf-8' || lower === 'application/json;charset=utf-8';
}

function send(res: ServerResponse, status: number, payload: string, retryAfter?: number, close = false): void {
  if (res.destroyed || res.writableEnded) return;
  const headers: Record<string, string> = {};
  // fastify closes the connection after a body its parser refused (the client may send more).
  if (close) headers.connection = 'close';
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(status, headers);
  res.end(payload);
}

/** The request's body as text once all `bytes` came; undefined for an aborted or broken request (no one to answer, as with fastify). */
function readBody(req: IncomingMessage, bytes: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (error?: unknown): void => {
      req.off('data', onData);
      req.off('end', done);
      req.off('error', done);
      req.off('close', done);
      if (error !== undefined || received !== bytes) resolve(undefined);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', done);
    req.on('error', done);
    req.on('close', done);
    req.resume();
  });
}

/**
 * The server's request listener in front of fastify's (`fastify`): a request the lean
 * path does not take goes to fastify with nothing of it read or changed.
 */
class LeanRunsync {
  readonly #options: LeanRunsyncOptions;
  readonly #stats: LeanRunsyncStats;
  readonly #fastify: (req: IncomingMessage, res: ServerResponse) => void;
  readonly #harness: Harness;

  constructor(options: LeanRunsyncOptions, stats: LeanRunsyncStats, fastify: (req: IncomingMessage, res: ServerResponse) => void) {
    this.#options = options;
    this.#stats = stats;
    this.#fastify = fastify;
    this.#harness = options.context.harness;
  }

  listen(req: IncomingMessage, res: ServerResponse): void {
    const taken = this.#takes(req);
    if (taken === undefined) {
      this.#fastify(req, res);
      return;
    }
    void this.#serve(req, res, taken.endpointId, taken.bytes);
  }

  /** Whether the lean path takes the request (every check it can make before reading passes). */
  #takes(req: IncomingMessage): { endpointId: string; bytes: number } | undefined {
    const { context, rootEndpoint, apiKey, deleted } = this.#options;
    // Closing: fastify answers with Connection: close from now on.
    if (req.method !== 'POST' || context.closing.aborted) return undefined;
    const endpointId = leanRunsyncEndpoint(req.url ?? '', rootEndpoint);
    if (endpointId === undefined) return undefined;
    const headers = req.headers;
    if (apiKey && !apiKey(headers.authorization)) return undefined;
    if (this.#harness.findEndpoint(endpointId) === undefined || deleted(endpointId)) return undefined;
    if (!isJsonType(headers['content-type']) || headers['transfer-encoding'] !== undefined || headers.expect !== undefined) return undefined;
    const length = headers['content-length'];
    if (typeof length !== 'string' || !LENGTH.test(length)) return undefined;
    const bytes = Number(length);
    if (bytes === 0 || bytes >= RAW_INPUT_MIN_CHARS) return undefined;
    return { endpointId, bytes };
  }

  async #serve(req: IncomingMessage, res: ServerResponse, endpointId: string, bytes: number): Promise<void> {
    let admitted: boolean;
    try {
      admitted = await this.#admit(res, endpointId, bytes);
    } catch {
      admitted = false;
    }
    if (!admitted) {
      this.#fastify(req, res);
      return;
    }
    this.#stats.taken++;
    const text = await readBody(req, bytes);
    if (text === undefined) return;
    try {
      await this.#run(res, endpointId, text);
    } catch (error) {
      this.#fail(res, error, false);
    }
  }

  /** The checks that need the store (workers up, for the rate limit); false: fastify answers. */
  async #admit(res: ServerResponse, endpointId: string, bytes: number): Promise<boolean> {
    const { rateGate, queueRoom } = this.#options;
    const limit = rateGate ? await rateGate.limitFor(endpointId, 'runsync') : undefined;
    try {
      queueRoom.check(bytes);
    } catch {
      return false;
    }
    if (rateGate && limit) {
      const decision = rateGate.acquire(endpointId, 'runsync', limit);
      if (!decision.allowed) return false;
      res.once('close', decision.release);
    }
    queueRoom.reserve(bytes, res);
    return true;
  }

  /** From the body on: what the route does. */
  async #run(res: ServerResponse, endpointId: string, text: string): Promise<void> {
    const { context } = this.#options;
    let body: unknown;
    let bodyBytes = 0;
    if (text.trim() !== '') {
      bodyBytes = text.length;
      try {
        checkBodyShape(text);
        body = await this.#parsed(text);
      } catch (error) {
        this.#fail(res, error, true);
        return;
      }
    }
    const endpoint = this.#harness.endpoint(endpointId);
    const request = jobRequestOf(body, context, endpoint.id);
    const wait = RUNSYNC_WAIT_MS.default;
    const waiting = rawRequestSignal(res, context.closing);
    try {
      const view = await endpoint.submitAndWait(request, { sync: true, waitMs: wait, bytes: bodyBytes }, wait, waiting.signal);
      send(res, 200, JSON.stringify(isTerminal(view.status) ? view : { id: view.id, status: view.status }));
    } finally {
      waiting.dispose();
    }
  }

  /** The body parsed; fastify's parser answers at once, so no promise is made for it then. */
  #parsed(text: string): unknown {
    let answer: { error: Error | null; body?: unknown } | undefined;
    let settle: ((value: { error: Error | null; body?: unknown }) => void) | undefined;
    this.#options.parseJson(text, (error, body) => {
      answer = { error, body };
      settle?.(answer);
    });
    const read = (value: { error: Error | null; body?: unknown }): unknown => {
      if (value.error) throw value.error;
      return value.body;
    };
    return answer !== undefined
      ? read(answer)
      : new Promise((resolve) => (settle = resolve)).then((value) => read(value as { error: Error | null; body?: unknown }));
  }

  /** Answer an error as installErrorHandler does (the body has been read). */
  #fail(res: ServerResponse, error: unknown, close: boolean): void {
    const { logger, storeOutage } = this.#options;
    const coded = toServerlessWorkerError(error);
    if (coded.code === 'SW_INTERNAL') logger.error({ err: coded.cause ?? coded }, 'internal error');
    if (coded.code === 'SW_STORE_UNAVAILABLE' && coded.cause !== undefined && storeOutage !== undefined) {
      storeOutage.unavailable({ log: logger, routeOptions: { url: ROUTE_URL } } as unknown as FastifyRequest, coded, STORE_UNAVAILABLE_RETRY_AFTER_S);
    }
    const retryAfter = coded.details?.retryAfterSeconds;
    send(res, coded.status, JSON.stringify(coded.toJSON()), typeof retryAfter === 'number' ? retryAfter : undefined, close);
  }
}
