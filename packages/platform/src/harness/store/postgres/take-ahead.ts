/**
 * @module harness/store/postgres/take-ahead
 * Jobs claimed ahead for a worker that drains a deep queue (issue 33, item 2). A worker
 * taking over HTTP asks for its free slots, waits for the answer, runs the jobs, posts
 * their results and asks again: each take waited for a claim statement and its commit
 * (the WAL flush), 12 ms a take at the median in a loaded drain against 0.6 ms on the
 * memory store. A worker that comes back for more within FAST_MS of its previous take
 * gets jobs claimed ahead for it: its claims ask for as many again as it asked in the
 * last FAST_MS (at most MAX_AHEAD; none below MIN_DEMAND), and the reserve is topped up in the background as
 * its takes empty it, so its next take is answered from memory, without a statement.
 *
 * The rules that keep a job with one worker:
 * - a reserved job is claimed for its worker like any taken job (IN_PROGRESS, its
 *   worker, attempt + 1, `FOR UPDATE SKIP LOCKED`: no other taker sees it), and is
 *   handed out once, to that worker only, oldest first (the queue's order);
 * - a reserved job that any change moves out of IN_PROGRESS (cancel, a timeout, a
 *   requeue, in this process or another: the store's events) leaves the reserve unseen;
 * - one not handed out within HOLD_MS, or still held when the worker is removed, the
 *   store closes, or events may have been missed (resync), goes back to its place in the
 *   queue as never taken (`returnJob`: a compare-and-set on worker and attempt, neither
 *   `lost` nor `retries` counted);
 * - a claim that comes back short (the queue is drained) stops the top-ups until a
 *   take's claim comes back full again.
 *
 * What it costs: a reserved job's execution deadline and start time run from its claim,
 * at most HOLD_MS before the worker gets it; while held it is with its worker for the
 * other workers of the endpoint, who may wait up to HOLD_MS for it (at the tail of a
 * backlog: what the worker would take within about FAST_MS). A harness killed with
 * reserves held leaves them IN_PROGRESS with their worker, which never lists them in its
 * heartbeats: they are requeued as a lost take answer is (the worker API's reconcile), or
 * with the worker when it is gone.
 */
import type { Job, TimerHandle } from 'serverless-worker/internal';

/** A worker is draining when its takes come back within this, ms. */
export const FAST_MS = 250;
/** A reserved job not handed out within this goes back to the queue, ms. */
export const HOLD_MS = 1_000;
/**
 * Jobs held ahead for one worker at most. Twice what one burst of takes empties: a worker of
 * concurrency 16 whose results are written in the background takes up to 32 at once when a
 * result statement lands. At 64 the top-up (claimed at half) landed after the burst had
 * emptied the reserve, and a taker waited for it on each round.
 */
export const MAX_AHEAD = 128;
/** Jobs a worker asks within FAST_MS before any are claimed ahead for it (a worker running one job at a time that takes seconds never is). */
export const MIN_DEMAND = 4;

interface Held {
  readonly job: Job;
  readonly claimedAt: number;
}

/** One worker's reserve and its recent demand. */
export class Reserve {
  readonly endpointId: string;
  readonly workerId: string;
  held: Held[] = [];
  /** When the worker's last take came, ms (the store's clock). */
  lastTakeAt: number | undefined;
  /** Jobs asked in the current and the previous FAST_MS window. */
  #windowStart = 0;
  #asked = 0;
  #askedBefore = 0;
  /** The last claim with jobs ahead came back full (the queue is deeper). */
  deep = true;
  /** The top-up claim in flight. */
  refilling: Promise<void> | undefined;
  timer: TimerHandle | undefined;

  constructor(endpointId: string, workerId: string) {
    this.endpointId = endpointId;
    this.workerId = workerId;
  }

  /** A take of `max` at `at`: whether the worker is draining (it came back within FAST_MS). */
  asked(max: number, at: number): boolean {
    const fast = this.lastTakeAt !== undefined && at - this.lastTakeAt < FAST_MS;
    this.lastTakeAt = at;
    if (at - this.#windowStart >= FAST_MS) {
      this.#askedBefore = at - this.#windowStart < 2 * FAST_MS ? this.#asked : 0;
      this.#asked = 0;
      this.#windowStart = at;
    }
    this.#asked += max;
    return fast;
  }

  /** How many to hold ahead: what the worker asked in the last FAST_MS (at most MAX_AHEAD), or none below MIN_DEMAND. */
  target(max: number): number {
    const demand = Math.max(max, this.#asked, this.#askedBefore);
    return demand < MIN_DEMAND ? 0 : Math.min(MAX_AHEAD, demand);
  }

  /** The `count` oldest held jobs, taken out. */
  shift(count: number): Job[] {
    return this.held.splice(0, count).map((held) => held.job);
  }

  /** Held jobs claimed before `before`, taken out. */
  expired(before: number): Job[] {
    const at = this.held.findIndex((held) => held.claimedAt >= before);
    return this.shift(at < 0 ? this.held.length : at);
  }

  /** Jobs claimed ahead for this worker, at `at`, after what it holds (the claim's order: the queue's). */
  add(jobs: readonly Job[], at: number): void {
    for (const job of jobs) this.held.push({ job, claimedAt: at });
  }

  /** Drop the held job `jobId` (it changed); answers whether it was held. */
  drop(jobId: string): boolean {
    const index = this.held.findIndex((held) => held.job.id === jobId);
    if (index < 0) return false;
    this.held.splice(index, 1);
    return true;
  }
}
