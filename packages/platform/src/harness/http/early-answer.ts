/**
 * @module harness/http/early-answer
 * An error answered before the request body was read (413 over the body limit, 401 or
 * 429 from an onRequest hook) must still reach a client that is sending that body.
 * Answering and closing at once made the kernel reset the connection on the bytes still
 * arriving, and clients (Node's fetch, curl) reported EPIPE or a reset instead of the
 * answer. So the rest of the body is read and discarded first, up to twice the route's
 * body limit or EARLY_ANSWER_DRAIN_MS, whichever comes first; then the answer goes.
 *
 * A body that waits for a read slot (body-read-gate.ts) is not drained first: that would
 * make the answer wait for a slot behind other uploads (seconds, or until a stalled one is
 * given up), though nothing of it needs reading. It is answered at once, and the
 * connection is kept open until its body has been read in its turn (Node's own discard of
 * an unread body), its client closes, or EARLY_ANSWER_DRAIN_MS pass, so that closing never
 * resets the answer away while the client is still sending.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';
import { systemClock } from 'serverless-worker/internal';
import { waitsForBodySlot } from './body-read-gate.js';

/** Longest wait for the rest of a refused body, ms. */
export const EARLY_ANSWER_DRAIN_MS = 5_000;
/** Bytes read when the route has no body limit of its own (fastify's default limit, twice). */
const DEFAULT_DRAIN_BYTES = 2 * 1024 * 1024;

/** Read and discard what is left of `raw`'s body; resolves at its end, past `maxBytes` or `maxMs`, or when it closes. */
export function drainRequestBody(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = (): void => {
      timer.cancel();
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('close', done);
      raw.off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBytes) done();
    };
    const timer = systemClock.setTimer(maxMs, done);
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

/**
 * For an error handler: `payload` with `status`, sent at once when the body has been
 * read, else after the body is drained (see the module doc). Answers what fastify's
 * error handler expects: the payload, or a promise of it.
 */
export function answerAfterBody(reply: FastifyReply, status: number, payload: unknown): unknown {
  reply.code(status).type('application/json; charset=utf-8');
  const raw = reply.request.raw;
  if (raw.complete || raw.destroyed) return payload;
  if (waitsForBodySlot(raw)) {
    lingerUntilBodyRead(raw);
    return payload;
  }
  const limit = reply.request.routeOptions?.bodyLimit;
  const maxBytes = typeof limit === 'number' && limit > 0 ? 2 * limit : DEFAULT_DRAIN_BYTES;
  return drainRequestBody(raw, maxBytes, EARLY_ANSWER_DRAIN_MS).then(() => payload);
}

/**
 * When Node closes the connection after the answer (the request said `Connection: close`),
 * only end our side then (the answer is sent, the client reads it), and close the socket
 * once `raw`'s body has been read or closed, or after EARLY_ANSWER_DRAIN_MS.
 */
function lingerUntilBodyRead(raw: IncomingMessage): void {
  const socket = raw.socket;
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = (): void => {
    if (raw.readableEnded || raw.destroyed) return destroySoon();
    socket.end();
    const timer = systemClock.setTimer(EARLY_ANSWER_DRAIN_MS, close);
    function close(): void {
      timer.cancel();
      raw.off('end', close);
      raw.off('close', close);
      destroySoon();
    }
    raw.once('end', close);
    raw.once('close', close);
  };
}
