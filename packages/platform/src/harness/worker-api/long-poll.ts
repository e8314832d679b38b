/**
 * @module harness/worker-api/long-poll
 * One held request: a signal that aborts when the hold time is over, when the client
 * goes away before the answer (its socket closed: a killed worker), or when the
 * harness closes. The store's waiters listen to it, so a job is never handed to a poll
 * whose worker is no longer there to receive it.
 */
import type { FastifyReply } from 'fastify';
import type { Clock } from 'serverless-worker/internal';

export interface HeldRequest {
  readonly signal: AbortSignal;
  /** True when the client left before the answer. */
  readonly clientGone: () => boolean;
  /** Stop listening (call once the answer is decided). */
  release(): void;
}

/** `controller`: the one whose signal the held request answers, when others abort it too (default: a new one). */
export function holdRequest(reply: FastifyReply, holdMs: number, closing: AbortSignal, clock: Clock, controller = new AbortController()): HeldRequest {
  let gone = false;
  const abort = (): void => controller.abort();
  const onClose = (): void => {
    // 'close' on the response before it was written means the connection ended under us.
    if (!reply.raw.writableEnded) {
      gone = true;
      abort();
    }
  };
  const timer = clock.setTimer(holdMs, abort, { keepAlive: true });
  reply.raw.once('close', onClose);
  if (closing.aborted) abort();
  else closing.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    clientGone: () => gone || reply.raw.destroyed,
    release: () => {
      timer.cancel();
      reply.raw.off('close', onClose);
      closing.removeEventListener('abort', abort);
    },
  };
}
