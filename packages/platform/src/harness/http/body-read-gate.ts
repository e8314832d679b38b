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
 * chunked one) takes a slot when one is free. Else its socket stops being read at once (what
 * Node's own back-pressure does, `socket.pause()`), and its IncomingMessage's `_read` (what
 * restarts the socket once the body's buffer has been consumed) does nothing until a slot
 * frees; then the socket is read again. Pausing only `_read` was not enough: Node stops a
 * socket only when the body's buffer is full, and from Node 22 (64 KiB buffers) the first
 * chunk no longer filled it, so a consumer that began reading (fastify's parser, the early
 * answers' drain) kept the socket read at full speed (every upload at once on Node 24). A
 * waiting body so costs what arrived with its headers and no reads, whoever consumes it. A
 * slot is freed when its body has ended or its request closed.
 *
 * A slot whose socket brought nothing for STALL_MS while bodies wait is given up: its body
 * goes on being read outside the gate (it arrives slowly or not at all, so it costs the loop
 * nothing). Otherwise a client that sent its headers and then nothing, or one answered early
 * (413, 503) that stopped sending, held a slot until the request timeout, and every big body
 * behind it waited. Bodies waiting count that wait in their own request time
 * (`--request-timeout-ms`, connection-limits.ts).
 *
 * A request refused while its body waits (401, 404, 413, 429, 503 SW_QUEUE_FULL) is answered
 * at once, not after a slot (early-answer.ts asks `waitsForBodySlot`): its body keeps its
 * place and is drained when its turn comes. The counts are on /metrics (`observer`).
 */
import type { IncomingMessage, Server } from 'node:http';
import { systemClock, type TimerHandle } from 'serverless-worker/internal';

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

/** A slot whose socket brought no bytes for this long, while bodies wait, is given up (ms). */
export const STALL_MS = 1_000;

/** Requests whose body waits for a slot now, whatever gate holds them (early-answer.ts answers these at once). */
const waitingRequests = new WeakSet<IncomingMessage>();

/** Whether `req`'s body waits, unread, for a read slot. */
export function waitsForBodySlot(req: IncomingMessage): boolean {
  return waitingRequests.has(req);
}

/** Told of the gate's changes (the /metrics gauges and counter). */
export interface BodyReadGateObserver {
  /** The counts changed. */
  state(state: BodyReadGateState): void;
  /** A slot was given up because its socket stalled. */
  stalled(): void;
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
  /** Slot holders: the socket's bytesRead at the last look, and how to give the slot up. */
  readonly #holders = new Map<IncomingMessage, { bytesRead: number; readonly release: () => void }>();
  #stallCheck: TimerHandle | undefined;
  readonly #observer: BodyReadGateObserver | undefined;

  constructor(slots: number = BODY_READ_SLOTS, observer?: BodyReadGateObserver) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`BodyReadGate: slots must be a whole number of at least 1, got ${slots}`);
    this.#slots = slots;
    this.#observer = observer;
  }

  #changed(): void {
    this.#observer?.state(this.state);
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
    // Stop reading its socket now, and keep it stopped: Node's _read is what restarts it once the body's buffer is consumed.
    const read = req._read;
    let asked: number | undefined;
    req._read = (size: number): void => {
      asked = size;
    };
    req.socket.pause();
    const entry = {
      req,
      start: (): void => {
        waitingRequests.delete(req);
        req._read = read;
        this.#take(req);
        // Asked for more meanwhile: Node's own _read restarts the socket; else restart it here
        // (not through _read, which would mark the body as being consumed when it is not).
        if (asked !== undefined) read.call(req, asked);
        else req.socket.resume();
      },
    };
    this.#waiting.push(entry);
    waitingRequests.add(req);
    this.#changed();
    this.#watchStalls();
    // Closed while waiting (the client went away, a timeout): nothing to read any more.
    req.once('close', () => {
      waitingRequests.delete(req);
      const index = this.#waiting.indexOf(entry);
      if (index < 0) return;
      this.#waiting.splice(index, 1);
      this.#changed();
    });
  }

  #take(req: IncomingMessage): void {
    this.#reading++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#holders.delete(req);
      this.#reading--;
      this.#next();
      this.#changed();
    };
    this.#holders.set(req, { bytesRead: req.socket.bytesRead, release });
    this.#changed();
    req.once('end', release);
    req.once('close', release);
  }

  /** While bodies wait, look every STALL_MS for slot holders whose sockets brought nothing since the last look. */
  #watchStalls(): void {
    if (this.#stallCheck !== undefined) return;
    this.#stallCheck = systemClock.setTimer(STALL_MS, () => {
      this.#stallCheck = undefined;
      if (this.#waiting.length === 0) return;
      for (const [req, holder] of [...this.#holders]) {
        const bytesRead = req.socket.bytesRead;
        if (bytesRead === holder.bytesRead) {
          this.#observer?.stalled();
          holder.release();
        } else holder.bytesRead = bytesRead;
      }
      if (this.#waiting.length > 0) this.#watchStalls();
    });
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
export function installBodyReadGate(server: Server, slots: number = BODY_READ_SLOTS, observer?: BodyReadGateObserver): BodyReadGate {
  const gate = new BodyReadGate(slots, observer);
  server.prependListener('request', (req: IncomingMessage) => gate.admit(req));
  return gate;
}
