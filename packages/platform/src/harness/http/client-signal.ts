/**
 * @module harness/http/client-signal
 * A signal for one request that aborts when the client goes away before the answer is
 * complete, or when the server starts closing. Long polls (/runsync, /status-sync,
 * /stream, OpenAI) stop waiting on it, so neither a dropped client nor a shutdown leaves
 * a request hanging.
 *
 * It is not an AbortController: one per /runsync, with a listener on the server's
 * closing signal added and removed per request, was about 5 % of a busy local API's CPU
 * (Node's EventTarget is slow; bench/README.md, issue 19). A request's signal is a small
 * object with the part of AbortSignal that the long polls use (StopSignal), and the
 * requests waiting on one closing signal share a single listener on it. They are held in
 * a HeldList, not a Set: the Set's tables that V8 replaced as requests came and went kept
 * the answered requests' objects (this signal, its response, the request) alive through
 * young collections, and promoted, at 8 clients (collections/held-list.ts).
 */
import type { FastifyReply } from 'fastify';
import { HeldList, type StopSignal } from 'serverless-worker/internal';

export type RequestStopReason = 'client-gone' | 'closing';

export interface RequestSignal {
  readonly signal: StopSignal;
  /** Why it aborted: the client left, or the server is closing; undefined while not aborted. */
  readonly reason: () => RequestStopReason | undefined;
  /** Remove the listeners (call when the request is answered). */
  dispose(): void;
}

class RequestStop implements StopSignal, RequestSignal {
  #reason: RequestStopReason | undefined;
  #listeners: Array<() => void> | undefined;
  readonly #res: FastifyReply['raw'];
  readonly #stopWaiting: (() => void) | undefined;

  constructor(res: FastifyReply['raw'], waits: HeldList<RequestStop> | undefined) {
    this.#res = res;
    res.on('close', this.#onClose);
    this.#stopWaiting = waits?.add(this);
  }

  reason(): RequestStopReason | undefined {
    return this.#reason;
  }

  get signal(): StopSignal {
    return this;
  }

  get aborted(): boolean {
    return this.#reason !== undefined;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.#listeners?.splice(at, 1);
  }

  /** Abort for `reason` (once): every listener is called once. */
  abort(reason: RequestStopReason): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    const listeners = this.#listeners ?? [];
    this.#listeners = undefined;
    for (const listener of listeners) listener();
  }

  dispose(): void {
    this.#res.off('close', this.#onClose);
    this.#stopWaiting?.();
  }

  readonly #onClose = (): void => {
    // 'close' also fires after a complete answer; only an unfinished one means the client left.
    if (!this.#res.writableFinished) this.abort('client-gone');
  };
}

/** The requests waiting on each closing signal, and that signal's one listener. */
const waitsByClosing = new WeakMap<AbortSignal, HeldList<RequestStop>>();

function waitsOn(closing: AbortSignal): HeldList<RequestStop> | undefined {
  if (closing.aborted) return undefined;
  let waits = waitsByClosing.get(closing);
  if (waits === undefined) {
    const created = new HeldList<RequestStop>();
    waits = created;
    waitsByClosing.set(closing, created);
    closing.addEventListener(
      'abort',
      () => {
        for (const wait of created.clear()) wait.abort('closing');
      },
      { once: true },
    );
  }
  return waits;
}

export function requestSignal(reply: FastifyReply, closing: AbortSignal): RequestSignal {
  const stop = new RequestStop(reply.raw, waitsOn(closing));
  if (closing.aborted) stop.abort('closing');
  return stop;
}
