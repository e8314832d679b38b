/**
 * @module harness/http/body-read-gate
 * At most BODY_READ_SLOTS large request bodies are read from their sockets at once; the
 * others wait, unread, in the order they came (issue 49 item 4).
 *
 * Why: libuv takes one new connection per turn of the event loop, and in each turn reads
 * every readable socket (up to 32 reads of 64 KiB each). With 80 bodies of 10 MB arriving,
 * a turn read about 80 sockets' worth of data (50 to 600 ms on a loaded machine) while the
 * loop never looked blocked for long (its delay peaked at 0.4 to 2 s), and a new connection,
 * a /health probe's, waited in the kernel's accept queue behind the uploads' own
 * connections, taken one per such turn: 3 to 12 s before it was even accepted (strace:
 * one accept4 per epoll_wait; bench/health-under-uploads.ts). With only a few bodies read
 * at once a turn stays short, so connections are taken and small requests answered
 * promptly; the bodies as a whole arrive no slower, since the loop reads them as fast as one
 * core can anyway.
 *
 * How: a request whose body may be large (Content-Length of LARGE_BODY_BYTES or more, or a
 * chunked one) takes a slot when one is free; else its IncomingMessage's `_read` (what asks
 * the socket for more of the body once its buffer has been consumed) does nothing until a
 * slot frees. Node stops reading a request's socket once the body's buffer is full (about
 * 64 KiB) until `_read` asks again, so a waiting body costs that much memory and no reads,
 * whoever consumes it (fastify's parser, the early answers' drain, Node's own discard). A
 * slot is freed when its body has ended or its request closed.
 *
 * A client that sends its body very slowly holds a slot until the request timeout
 * (`--request-timeout-ms`, connection-limits.ts) closes it; bodies behind it wait, and
 * count that wait in their own request time.
 */
import type { IncomingMessage, Server } from 'node:http';

/** Bodies read at once: enough to keep a core busy, few enough that a turn of the loop stays short. */
export const BODY_READ_SLOTS = 4;

/** A body declared this large or more (bytes) takes a slot; smaller ones arrive in a read or two and never wait. */
export const LARGE_BODY_BYTES = 64 * 1024;

/** Whether `req` may carry a body of LARGE_BODY_BYTES or more (chunked bodies do not say: they may). */
export function mayHaveLargeBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (typeof length === 'string' && /^\d{1,15}$/.test(length)) return Number(length) >= LARGE_BODY_BYTES;
  const encoding = req.headers['transfer-encoding'];
  return typeof encoding === 'string' && /\bchunked\b/i.test(encoding);
}

/** Counts of the gate (tests, metrics). */
export interface BodyReadGateState {
  /** Bodies being read now. */
  readonly reading: number;
  /** Bodies waiting for a slot. */
  readonly waiting: number;
}

export class BodyReadGate {
  readonly #slots: number;
  #reading = 0;
  readonly #waiting: Array<{ readonly req: IncomingMessage; readonly start: () => void }> = [];

  constructor(slots: number = BODY_READ_SLOTS) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`BodyReadGate: slots must be a whole number of at least 1, got ${slots}`);
    this.#slots = slots;
  }

  get state(): BodyReadGateState {
    return { reading: this.#reading, waiting: this.#waiting.length };
  }

  /** Call when `req` arrives (before anything reads its body): it reads now or waits its turn. */
  admit(req: IncomingMessage): void {
    if (!mayHaveLargeBody(req) || req.complete) return;
    if (this.#reading < this.#slots) {
      this.#take(req);
      return;
    }
    // Hold the socket's reads: Node's _read is what restarts them once the body's buffer is consumed.
    const read = req._read;
    let asked: number | undefined;
    req._read = (size: number): void => {
      asked = size;
    };
    const entry = {
      req,
      start: (): void => {
        req._read = read;
        this.#take(req);
        if (asked !== undefined) read.call(req, asked);
      },
    };
    this.#waiting.push(entry);
    // Closed while waiting (the client went away, a timeout): nothing to read any more.
    req.once('close', () => {
      const index = this.#waiting.indexOf(entry);
      if (index >= 0) this.#waiting.splice(index, 1);
    });
  }

  #take(req: IncomingMessage): void {
    this.#reading++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#reading--;
      this.#next();
    };
    req.once('end', release);
    req.once('close', release);
  }

  #next(): void {
    while (this.#reading < this.#slots) {
      const entry = this.#waiting.shift();
      if (entry === undefined) return;
      if (entry.req.destroyed) continue;
      entry.start();
    }
  }
}

/** Gate every request of `server` (before its other request listeners run); answers the gate. */
export function installBodyReadGate(server: Server, slots: number = BODY_READ_SLOTS): BodyReadGate {
  const gate = new BodyReadGate(slots);
  server.prependListener('request', (req: IncomingMessage) => gate.admit(req));
  return gate;
}
