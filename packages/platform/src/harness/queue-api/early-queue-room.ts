/**
 * @module harness/queue-api/early-queue-room
 * /run and /runsync refuse a body the queue cap cannot take before reading it: when the
 * request says its size (Content-Length) and that many bytes more would pass
 * maxQueuedBytes (`--max-queued-bytes`), it is answered 503 SW_QUEUE_FULL with
 * Retry-After at once. A body let in reserves its declared size until its answer is
 * sent (then the queue counts it, if it was queued), so that bodies arriving together
 * cannot all pass the check before any is queued. The refused body is then read and
 * discarded (never held nor parsed) only so that the client reads the answer
 * (http/early-answer.ts). Before, every refused body was read whole and parsed first:
 * 80 bodies of 10 MB held 1.7 GB and took minutes to answer (issue 32). A chunked body
 * (no Content-Length) is checked when it has arrived. A declared size over the route's own
 * body limit is answered 413 SW_PAYLOAD_TOO_LARGE first: waiting would not make it fit.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Harness } from 'serverless-worker/internal';
import { payloadTooLarge } from '../http/error-reply.js';

/** The request's declared body size, bytes; undefined without a valid Content-Length. */
export function declaredBodyBytes(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) return undefined;
  return Number(header);
}

/**
 * Declared bytes of bodies let in whose answer has not been sent yet, shared by the
 * submit routes of every prefix (the queue API's and the OpenAI-compatible ones).
 */
export class QueueRoomReservations {
  readonly #harness: Harness;
  #inFlight = 0;

  constructor(harness: Harness) {
    this.#harness = harness;
  }

  /** Throws SW_QUEUE_FULL when `bytes` more cannot fit in the queue now; reserves nothing. */
  check(bytes: number): void {
    this.#harness.checkQueueRoom(bytes, this.#inFlight);
  }

  /** Hold `bytes` until `res` closes (sent, failed or abandoned: 'close' comes once either way). */
  reserve(bytes: number, res: ServerResponse): void {
    this.#inFlight += bytes;
    res.once('close', () => {
      this.#inFlight -= bytes;
    });
  }
}

/** onRequest hook of the submit routes: throws SW_QUEUE_FULL when the declared body cannot fit in the queue now. */
export function earlyQueueRoomHook(room: QueueRoomReservations): onRequestHookHandler {
  return (request, reply, done) => {
    const bytes = declaredBodyBytes(request);
    if (bytes === undefined || bytes === 0) return done();
    // Over the route's own limit: 413, which no retry can fix; the queue cap's 503 says "later",
    // and a client would send it again forever (issue 49 item 5).
    const limit = request.routeOptions.bodyLimit;
    if (typeof limit === 'number' && bytes > limit) {
      done(payloadTooLarge(limit, bytes));
      return;
    }
    try {
      room.check(bytes);
    } catch (error) {
      done(error as Error);
      return;
    }
    room.reserve(bytes, reply.raw);
    done();
  };
}
