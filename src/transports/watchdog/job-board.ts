/**
 * @module transports/watchdog/job-board
 * Shared memory between the main thread and the watchdog thread, so that telling the
 * watchdog about a job costs no message: a tick the main thread writes on a
 * timer (its liveness), a "fired" flag the watchdog raises, and one slot per running
 * job holding its id, its attempt, its execution deadline and its start (epoch ms).
 * The tick is the time of the main thread's last turn, epoch ms in a BigInt64 (Atomics
 * read it whole; it does not wrap however long the worker lives: an Int32 of ms since
 * the board was made wrapped after 24.8 days). The main thread is the only writer of
 * slots; each slot is a seqlock (odd sequence: being written), so the watchdog never
 * reads half a slot.
 */
import { systemClock } from '../../clock/index.js';

/** Bytes of a job id a slot holds (UTF-8); a longer id is not watched. */
export const JOB_ID_MAX_BYTES = 256;

const HEADER_INTS = 4;
/** Bytes before the slots: the Int32 header, then the tick (a BigInt64, epoch ms). */
const HEADER_BYTES = HEADER_INTS * 4 + 8;
const FIRED = 1;
const SLOT_COUNT = 2;
/** Per slot: sequence, active flag, id length, attempt (NO_ATTEMPT: none). */
const SLOT_INTS = 4;
const NO_ATTEMPT = -1;
/** Per slot: deadline, start. */
const SLOT_DOUBLES = 2;

/** One running job as the watchdog reads it. */
export interface WatchedJob {
  /** Its slot on the board: two attempts of one job have two. */
  readonly slot: number;
  readonly id: string;
  /** The job's attempt (Job.attempt), when it carried one. */
  readonly attempt?: number;
  /** Execution deadline, epoch ms (before the grace). */
  readonly deadlineAt: number;
  /** When the job started, epoch ms. */
  readonly startedAt: number;
}

interface Views {
  readonly header: Int32Array;
  readonly tick: BigInt64Array;
  readonly slots: Int32Array;
  readonly times: Float64Array;
  readonly ids: Uint8Array;
  readonly count: number;
}

function layout(buffer: SharedArrayBuffer, count: number): Views {
  const headerBytes = HEADER_BYTES;
  const slotBytes = count * SLOT_INTS * 4;
  const timesOffset = Math.ceil((headerBytes + slotBytes) / 8) * 8;
  const idsOffset = timesOffset + count * SLOT_DOUBLES * 8;
  return {
    header: new Int32Array(buffer, 0, HEADER_INTS),
    tick: new BigInt64Array(buffer, HEADER_INTS * 4, 1),
    slots: new Int32Array(buffer, headerBytes, count * SLOT_INTS),
    times: new Float64Array(buffer, timesOffset, count * SLOT_DOUBLES),
    ids: new Uint8Array(buffer, idsOffset, count * JOB_ID_MAX_BYTES),
    count,
  };
}

function bytesFor(count: number): number {
  const ints = Math.ceil((HEADER_BYTES + count * SLOT_INTS * 4) / 8) * 8;
  return ints + count * SLOT_DOUBLES * 8 + count * JOB_ID_MAX_BYTES;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Write `jobId` as UTF-8 at `offset` (at most JOB_ID_MAX_BYTES); answers the bytes
 * written, or -1 when it does not fit. ASCII ids (what platforms hand out) are copied
 * byte by byte, without the view per job that encodeInto needs.
 */
function writeId(ids: Uint8Array, offset: number, jobId: string): number {
  if (jobId.length <= JOB_ID_MAX_BYTES) {
    let ascii = true;
    for (let i = 0; i < jobId.length; i++) {
      const code = jobId.charCodeAt(i);
      if (code > 0x7f) {
        ascii = false;
        break;
      }
      ids[offset + i] = code;
    }
    if (ascii) return jobId.length;
  }
  const { read, written } = encoder.encodeInto(jobId, ids.subarray(offset, offset + JOB_ID_MAX_BYTES));
  return read < jobId.length ? -1 : written;
}

/** The main thread's side: claims and releases slots, advances the tick. */
export class JobBoard {
  readonly buffer: SharedArrayBuffer;
  readonly #views: Views;
  readonly #free: number[] = [];
  readonly #clock: () => number;

  /** A board of `slots` slots (jobs watched at once); `clock` (epoch ms, default the system clock) is for tests. */
  constructor(slots: number, clock: () => number = () => systemClock.now()) {
    const count = Math.max(1, Math.floor(slots));
    this.buffer = new SharedArrayBuffer(bytesFor(count));
    this.#views = layout(this.buffer, count);
    this.#clock = clock;
    this.tick();
    Atomics.store(this.#views.header, SLOT_COUNT, count);
    for (let slot = count - 1; slot >= 0; slot--) this.#free.push(slot);
  }

  /** Slots in all. */
  get size(): number {
    return this.#views.count;
  }

  /** Jobs watched now. */
  get watched(): number {
    return this.#views.count - this.#free.length;
  }

  /**
   * Watch a job (its `attempt` too, when it carried one: the watchdog's verdict names
   * it): answers its slot, or -1 when every slot is taken or the id is longer than
   * JOB_ID_MAX_BYTES (the job then runs unwatched).
   */
  claim(jobId: string, deadlineAt: number, startedAt: number, attempt?: number): number {
    const slot = this.#free.pop();
    if (slot === undefined) return -1;
    const { slots, times, ids } = this.#views;
    const written = writeId(ids, slot * JOB_ID_MAX_BYTES, jobId);
    if (written < 0) {
      this.#free.push(slot);
      return -1;
    }
    const base = slot * SLOT_INTS;
    Atomics.add(slots, base, 1); // odd: being written
    slots[base + 2] = written;
    slots[base + 3] = attempt !== undefined && Number.isInteger(attempt) && attempt >= 0 && attempt <= 0x7fffffff ? attempt : NO_ATTEMPT;
    times[slot * SLOT_DOUBLES] = deadlineAt;
    times[slot * SLOT_DOUBLES + 1] = startedAt;
    Atomics.store(slots, base + 1, 1);
    Atomics.add(slots, base, 1); // even: readable
    return slot;
  }

  /** The job of `slot` ended: stop watching it. */
  release(slot: number): void {
    if (slot < 0 || slot >= this.#views.count) return;
    const base = slot * SLOT_INTS;
    Atomics.add(this.#views.slots, base, 1);
    Atomics.store(this.#views.slots, base + 1, 0);
    Atomics.add(this.#views.slots, base, 1);
    this.#free.push(slot);
  }

  /** The main thread is alive: the tick is now. */
  tick(): void {
    Atomics.store(this.#views.tick, 0, BigInt(Math.round(this.#clock())));
  }

  /** The watchdog fired: it is reporting the jobs and ending the process. */
  get fired(): boolean {
    return Atomics.load(this.#views.header, FIRED) !== 0;
  }
}

/** The watchdog thread's side: reads the tick and the slots, raises the fired flag. */
export class JobBoardReader {
  readonly #views: Views;

  constructor(buffer: SharedArrayBuffer) {
    const count = new Int32Array(buffer, 0, HEADER_INTS)[SLOT_COUNT] ?? 0;
    this.#views = layout(buffer, count);
  }

  /** When the main thread last ticked, epoch ms (the board's making, before the first tick). */
  lastTickAt(): number {
    return Number(Atomics.load(this.#views.tick, 0));
  }

  /** Raise the fired flag; answers false when it was already up. */
  markFired(): boolean {
    return Atomics.compareExchange(this.#views.header, FIRED, 0, 1) === 0;
  }

  /** Every job watched now. */
  jobs(): WatchedJob[] {
    const { slots, times, ids, count } = this.#views;
    const found: WatchedJob[] = [];
    for (let slot = 0; slot < count; slot++) {
      const base = slot * SLOT_INTS;
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = Atomics.load(slots, base);
        if (before % 2 === 1) continue;
        if (Atomics.load(slots, base + 1) !== 1) break;
        const length = Math.min(slots[base + 2] ?? 0, JOB_ID_MAX_BYTES);
        const attemptOf = slots[base + 3] ?? NO_ATTEMPT;
        const deadlineAt = times[slot * SLOT_DOUBLES] ?? 0;
        const startedAt = times[slot * SLOT_DOUBLES + 1] ?? 0;
        // decode() cannot read a shared buffer: copy the bytes out first.
        const id = decoder.decode(ids.slice(slot * JOB_ID_MAX_BYTES, slot * JOB_ID_MAX_BYTES + length));
        if (Atomics.load(slots, base) !== before) continue;
        found.push({ slot, id, ...(attemptOf !== NO_ATTEMPT ? { attempt: attemptOf } : {}), deadlineAt, startedAt });
        break;
      }
    }
    return found;
  }
}
