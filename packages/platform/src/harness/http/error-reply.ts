/**
 * @module harness/http/error-reply
 * One place that turns any error into the harness's JSON error body
 * `{ error: { code, message, details? } }` with the status of its code. Fastify's own
 * errors (body too large, malformed JSON, bad content type) are mapped onto our codes,
 * so no error path answers 500 unless the harness itself is broken.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isServerlessWorkerError, ServerlessWorkerError, systemClock } from 'serverless-worker/internal';
import { databaseUnavailable } from '../postgres/unavailable.js';
import { answerAfterBody } from './early-answer.js';
import { StoreOutage } from './store-outage.js';
// The platform's error codes, registered before any error is raised or answered.
import '../../job/platform-error-codes.js';

/** Retry-After of a SW_STORE_UNAVAILABLE answer, s: a PostgreSQL restart takes a few seconds. */
export const STORE_UNAVAILABLE_RETRY_AFTER_S = 5;

/** 413 SW_PAYLOAD_TOO_LARGE: a body over the route's limit (`limit` bytes, when known), read or only declared. */
export function payloadTooLarge(limit: number | undefined, declaredBytes?: number): ServerlessWorkerError {
  const declared = declaredBytes !== undefined ? `Request body of ${declaredBytes} bytes (its Content-Length)` : 'Request body';
  return new ServerlessWorkerError(
    'SW_PAYLOAD_TOO_LARGE',
    `${declared} is larger than this route allows${limit ? ` (${limit} bytes)` : ''}: send large inputs by reference (s3Config or a URL)`,
    limit ? { limitBytes: limit, ...(declaredBytes !== undefined ? { declaredBytes } : {}) } : undefined,
  );
}

/** Map any thrown value onto a ServerlessWorkerError. */
export function toServerlessWorkerError(error: unknown, request?: FastifyRequest): ServerlessWorkerError {
  if (isServerlessWorkerError(error)) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(request?.routeOptions.bodyLimit);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ServerlessWorkerError('SW_INVALID_REQUEST', `Request body is not valid JSON: ${fastifyError.message ?? ''}`.trim());
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ServerlessWorkerError('SW_INVALID_REQUEST', `Unsupported request body: ${fastifyError.message ?? ''}; send content-type: application/json`);
    default:
      break;
  }
  const down = databaseUnavailable(error);
  if (down !== undefined) {
    return new ServerlessWorkerError(
      'SW_STORE_UNAVAILABLE',
      `The harness's job store is unavailable: ${down}. Nothing was changed that this answer does not confirm; retry after ${STORE_UNAVAILABLE_RETRY_AFTER_S} s`,
      { retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_S },
      { cause: error },
    );
  }
  if (error instanceof SyntaxError) {
    return new ServerlessWorkerError('SW_INVALID_REQUEST', `Request body is not valid JSON: ${error.message}`);
  }
  const statusCode = fastifyError.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new ServerlessWorkerError('SW_INVALID_REQUEST', fastifyError.message ?? 'Bad request');
  }
  return new ServerlessWorkerError('SW_INTERNAL', 'Internal error in the harness', undefined, { cause: error });
}

/** The outage of a server made without one (a worker API on an app of its own): its warnings throttled, no "back" line. */
const processOutage = new StoreOutage();

declare module 'fastify' {
  interface FastifyInstance {
    /** The job store's outage tracker (store-outage.ts), decorated by the harness server. */
    storeOutage?: StoreOutage;
  }
}

/** Log what went wrong: an internal error always; the store being down through its outage tracker (throttled, then "back" once). */
function logServerError(request: FastifyRequest, coded: ServerlessWorkerError): void {
  if (coded.code === 'SW_INTERNAL') request.log.error({ err: coded.cause ?? coded }, 'internal error');
  if (coded.code !== 'SW_STORE_UNAVAILABLE' || coded.cause === undefined) return;
  (request.server.storeOutage ?? processOutage).unavailable(request, coded, STORE_UNAVAILABLE_RETRY_AFTER_S);
}

/** Send `error` as the harness's JSON error body. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const coded = toServerlessWorkerError(error, reply.request);
  logServerError(reply.request, coded);
  const retryAfter = coded.details?.retryAfterSeconds;
  if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
  return reply.code(coded.status).type('application/json; charset=utf-8').send(coded.toJSON());
}

/**
 * Install the error handler on an app (or an encapsulated plugin scope). An error
 * answered before the request body was read waits for the body first (early-answer.ts).
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const coded = toServerlessWorkerError(error, request);
    logServerError(request, coded);
    // SW_QUEUE_FULL, SW_STORE_UNAVAILABLE (and any coded error that says when to come back).
    const retryAfter = coded.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
    return answerAfterBody(reply, coded.status, coded.toJSON());
  });
}

/** How long a connection whose request could not be parsed stays open for the answer to be read, ms. */
const CLIENT_ERROR_LINGER_MS = 2_000;

/**
 * Node's `clientError`: a request the HTTP parser refused (a byte not allowed in the
 * request line or a header, headers past the size limit, a request too slow to
 * arrive) never reaches a route. It is answered in the same JSON shape, 400
 * SW_INVALID_REQUEST, and the connection is closed (it cannot carry another request).
 * Fastify's own handler answers a body without our `code`.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const cause =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'its headers are larger than the server accepts'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'it did not arrive in time'
        : `it is not valid HTTP (${error.code ?? error.message}): a path, query or header may hold only ASCII, with other characters percent-encoded`;
  const coded = new ServerlessWorkerError('SW_INVALID_REQUEST', `The request could not be read: ${cause}`);
  const body = JSON.stringify(coded.toJSON());
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  // A client still sending its body keeps the socket open: close it after a while.
  systemClock.setTimer(CLIENT_ERROR_LINGER_MS, () => socket.destroy());
}
