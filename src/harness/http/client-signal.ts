/**
 * @module harness/http/client-signal
 * An AbortSignal for one request that aborts when the client goes away before the
 * answer is complete, or when the server starts closing. Long polls (/runsync,
 * /status-sync, /stream, OpenAI) stop waiting on it, so neither a dropped client nor a
 * shutdown leaves a request hanging.
 */
import type { FastifyReply } from 'fastify';

export interface RequestSignal {
  readonly signal: AbortSignal;
  /** Why it aborted: the client left, or the server is closing; undefined while not aborted. */
  readonly reason: () => 'client-gone' | 'closing' | undefined;
  /** Remove the listeners (call when the request is answered). */
  dispose(): void;
}

export function requestSignal(reply: FastifyReply, closing: AbortSignal): RequestSignal {
  const controller = new AbortController();
  let reason: 'client-gone' | 'closing' | undefined;
  const res = reply.raw;
  const onClose = (): void => {
    // 'close' also fires after a complete answer; only an unfinished one means the client left.
    if (res.writableFinished || controller.signal.aborted) return;
    reason = 'client-gone';
    controller.abort(new Error('client closed the connection'));
  };
  const onClosing = (): void => {
    if (controller.signal.aborted) return;
    reason = 'closing';
    controller.abort(new Error('harness closing'));
  };
  res.on('close', onClose);
  if (closing.aborted) onClosing();
  else closing.addEventListener('abort', onClosing, { once: true });
  return {
    signal: controller.signal,
    reason: () => reason,
    dispose: () => {
      res.off('close', onClose);
      closing.removeEventListener('abort', onClosing);
    },
  };
}
