/**
 * @module harness/store/postgres/joined-takes
 * The store's take path (issue 33, item 2). Takes made together (one turn of the event
 * loop, or while a take statement is in flight: coalescer.ts) go in one claim per
 * endpoint and worker (a worker of concurrency n asks n times), the claims side by side;
 * the oldest jobs go to the earliest call, each gets up to its `max`. A claim writes the
 * endpoint's row and the worker's presence only when take-writes.ts says so, and each
 * job taken is kept as claimed (its whole row) for its completion (completion.ts). A worker
 * that drains a deep queue gets jobs claimed ahead for it and its takes answered from them
 * (take-ahead.ts says when, and what keeps each job with one worker).
 */
import type postgres from 'postgres';
import { type Clock, type Job, type StoreEvent, systemClock, toDelivery } from 'serverless-worker/internal';
import { Coalescer } from './coalescer.js';
import type { TakenFacts } from './completion.js';
import { type ClaimedJob, claimJobs, parseClaimedRow } from './queue.js';
import type { TakeWrites } from './take-writes.js';
import type { StatementNotices } from './statement-notices.js';
import { HOLD_MS, Reserve } from './take-ahead.js';

/** Workers whose reserve and demand are remembered at most (see #forgetIdle). */
const MAX_RESERVES = 10_000;

/** Takes joined in one round at most (their claims run side by side, one per endpoint and worker). */
const TAKE_BATCH = { maxItems: 256, maxSize: 256 };

type TakeAnswer = { readonly jobs: Job[] } | { readonly error: unknown };

interface TakeCall {
  readonly endpointId: string;
  readonly workerId: string;
  readonly max: number;
  /** Jobs to claim besides `max`, for the worker's reserve. */
  readonly ahead: number;
  readonly now: number;
}

/** Put a job claimed ahead but never handed out back in the queue (the store's returnJob: a compare-and-set on worker and attempt). */
export type GiveBack = (endpointId: string, jobId: string, workerId: string, attempt: number) => Promise<boolean>;

export class JoinedTakes {
  readonly #sql: postgres.Sql;
  readonly #clock: Clock;
  readonly #taken: TakenFacts;
  readonly #takeWrites: TakeWrites;
  readonly #publish: (events: readonly StoreEvent[]) => void;
  readonly #takes: Coalescer<TakeCall, TakeAnswer>;
  readonly #giveBack: GiveBack;
  readonly #onError: (error: unknown) => void;
  readonly #notices: StatementNotices | undefined;
  /** By endpoint and worker. */
  readonly #reserves = new Map<string, Reserve>();
  /** The reserve holding each job claimed ahead, by endpoint and job id. */
  readonly #heldIn = new Map<string, Reserve>();
  /** Jobs this process is giving back (their 'changed' events are its own), by endpoint and job id. */
  readonly #givingBack = new Set<string>();
  /** By endpoint: jobs put back in the queue by others so far (a claim that lands after one holds nothing ahead). */
  readonly #putBacks = new Map<string, number>();
  /** By endpoint: the give-backs in flight, which a claim waits for (a job on its way back is older than what it would take). */
  readonly #backs = new Map<string, Promise<void>>();

  /**
   * `publish`: hand the committed claims' events to this process's listeners; other harnesses are told by the
   * claim statement itself while one listens (`notices`: statement-notices.ts).
   */
  constructor(
    sql: postgres.Sql,
    taken: TakenFacts,
    takeWrites: TakeWrites,
    publish: (events: readonly StoreEvent[]) => void,
    giveBack: GiveBack,
    onError: (error: unknown) => void,
    notices?: StatementNotices,
    clock: Clock = systemClock,
  ) {
    this.#notices = notices;
    this.#clock = clock;
    this.#sql = sql;
    this.#taken = taken;
    this.#takeWrites = takeWrites;
    this.#publish = publish;
    this.#giveBack = giveBack;
    this.#onError = onError;
    this.#takes = new Coalescer((takes) => this.#claimTogether(takes), TAKE_BATCH);
  }

  /**
   * Up to `max` queued jobs of `endpointId` for `workerId`: from its reserve when that
   * holds `max`, else claimed (with the takes made meanwhile), the reserve's first.
   */
  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    const key = `${endpointId}\u0000${workerId}`;
    let reserve = this.#reserves.get(key);
    if (!reserve) {
      reserve = new Reserve(endpointId, workerId);
      this.#reserves.set(key, reserve);
      this.#forgetIdle();
    }
    const fast = reserve.asked(max, this.#clock.now());
    if (reserve.held.length < max && reserve.refilling) await reserve.refilling;
    if (max > 0 && reserve.held.length >= max) {
      const jobs = this.#handOut(reserve, max);
      if (fast) this.#topUp(reserve, max, now);
      return jobs;
    }
    // Short of `max`: what it holds, and the rest claimed (with as many again ahead while the worker drains).
    const have = this.#handOut(reserve, Math.min(reserve.held.length, max));
    const backs = this.#backs.get(endpointId);
    if (backs) await backs;
    try {
      const answer = await this.#takes.add({ endpointId, workerId, max: max - have.length, ahead: fast ? reserve.target(max) : 0, now }, 1);
      if ('error' in answer) throw answer.error;
      return [...have, ...answer.jobs];
    } catch (error) {
      // Not handed out: they stay held (the hold's end gives them back).
      this.#hold(reserve, have, this.#clock.now());
      throw error;
    }
  }

  /** Store events: a held job that changed (cancelled, timed out, requeued) leaves its reserve; after a resync every reserve goes back. */
  onEvent(event: StoreEvent): void {
    if (event.type === 'resync') {
      void this.release((reserve) => reserve.endpointId === event.endpointId);
      return;
    }
    if (event.type !== 'changed' || event.status === undefined || event.status === 'IN_PROGRESS') return;
    const key = `${event.endpointId}\u0000${event.jobId}`;
    const reserve = this.#heldIn.get(key);
    if (reserve) {
      this.#heldIn.delete(key);
      reserve.drop(event.jobId);
    } else if (event.status === 'IN_QUEUE' && !this.#givingBack.has(key)) {
      this.#putBacks.set(event.endpointId, (this.#putBacks.get(event.endpointId) ?? 0) + 1);
      // Back in the queue, maybe at a place older than what the reserves hold: they go back too, takes keep the queue's order.
      if ([...this.#reserves.values()].some((each) => each.endpointId === event.endpointId && each.held.length > 0)) {
        void this.release((each) => each.endpointId === event.endpointId);
      }
    }
  }

  /** Give back what the reserves `which` hold (every reserve when left out); answers once the give-backs are done. */
  async release(which: (reserve: Reserve) => boolean = () => true): Promise<void> {
    const back: Promise<void>[] = [];
    for (const reserve of this.#reserves.values()) if (which(reserve)) back.push(this.#giveBackJobs(reserve, reserve.shift(reserve.held.length)));
    await Promise.all(back);
  }

  /** Forget the reserves of `endpointId` without giving back (the endpoint and its jobs are deleted). */
  forgetEndpoint(endpointId: string): void {
    for (const [key, reserve] of this.#reserves) {
      if (reserve.endpointId !== endpointId) continue;
      this.#handOut(reserve, reserve.held.length);
      reserve.timer?.cancel();
      this.#reserves.delete(key);
    }
  }

  /** Past MAX_RESERVES workers remembered, the oldest that hold nothing are forgotten (workers come and go). */
  #forgetIdle(): void {
    if (this.#reserves.size <= MAX_RESERVES) return;
    for (const [key, reserve] of this.#reserves) {
      if (this.#reserves.size <= MAX_RESERVES / 2) break;
      if (reserve.held.length === 0 && !reserve.refilling) this.#reserves.delete(key);
    }
  }

  /** `count` held jobs of `reserve`, handed out (no longer held). */
  #handOut(reserve: Reserve, count: number): Job[] {
    const jobs = reserve.shift(count);
    for (const job of jobs) this.#heldIn.delete(`${reserve.endpointId}\u0000${job.id}`);
    return jobs;
  }

  #hold(reserve: Reserve, jobs: readonly Job[], at: number): void {
    if (jobs.length === 0) return;
    reserve.add(jobs, at);
    for (const job of jobs) this.#heldIn.set(`${reserve.endpointId}\u0000${job.id}`, reserve);
    if (reserve.timer === undefined) this.#armHold(reserve);
  }

  /** Held jobs not handed out within HOLD_MS go back to the queue. */
  #armHold(reserve: Reserve): void {
    const oldest = reserve.held[0];
    if (!oldest) return;
    // Not keeping the process alive (the clock's default): a harness closing gives the held jobs back itself.
    reserve.timer = this.#clock.setTimer(Math.max(0, oldest.claimedAt + HOLD_MS - this.#clock.now()), () => {
      reserve.timer = undefined;
      const expired = reserve.expired(this.#clock.now() - HOLD_MS);
      for (const job of expired) this.#heldIn.delete(`${reserve.endpointId}\u0000${job.id}`);
      void this.#giveBackJobs(reserve, expired);
      this.#armHold(reserve);
    });
  }

  #giveBackJobs(reserve: Reserve, jobs: readonly Job[]): Promise<void> {
    if (jobs.length === 0) return Promise.resolve();
    const { endpointId } = reserve;
    const back = this.#giveBackEach(reserve, jobs);
    const all = Promise.all([this.#backs.get(endpointId), back]).then(() => undefined);
    this.#backs.set(endpointId, all);
    void all.finally(() => {
      if (this.#backs.get(endpointId) === all) this.#backs.delete(endpointId);
    });
    return back;
  }

  async #giveBackEach(reserve: Reserve, jobs: readonly Job[]): Promise<void> {
    for (const job of jobs) {
      const key = `${reserve.endpointId}\u0000${job.id}`;
      this.#heldIn.delete(key);
      this.#givingBack.add(key);
      await this.#giveBack(reserve.endpointId, job.id, reserve.workerId, job.attempt ?? 0)
        .catch(this.#onError)
        .finally(() => this.#givingBack.delete(key));
    }
  }

  /** The worker is draining and its reserve runs short: claim up to its target in the background (not while the queue came back short). */
  #topUp(reserve: Reserve, max: number, now: number): void {
    const target = reserve.target(max);
    if (target === 0 || !reserve.deep || reserve.refilling || reserve.held.length * 2 > target) return;
    const missing = target - reserve.held.length;
    const { endpointId, workerId } = reserve;
    reserve.refilling = this.#takes
      .add({ endpointId, workerId, max: 0, ahead: missing, now }, 1)
      .then((answer) => {
        if ('error' in answer) this.#onError(answer.error);
      })
      .finally(() => {
        reserve.refilling = undefined;
      });
  }

  /**
   * The takes joined: those of each endpoint and worker in one claim, the claims side by
   * side. Never rejects: a claim that failed answers its takes its error (the others'
   * claims committed; the joiner must not run them again).
   */
  async #claimTogether(takes: readonly TakeCall[]): Promise<TakeAnswer[]> {
    const groups = new Map<string, number[]>();
    takes.forEach((call, index) => {
      const key = `${call.endpointId}\u0000${call.workerId}`;
      const group = groups.get(key);
      if (group) group.push(index);
      else groups.set(key, [index]);
    });
    const answers: TakeAnswer[] = takes.map(() => ({ jobs: [] }));
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        try {
          const claimed = await this.#claim(indexes.map((index) => takes[index] as TakeCall));
          indexes.forEach((index, at) => (answers[index] = { jobs: claimed[at] ?? [] }));
        } catch (error) {
          for (const index of indexes) answers[index] = { error };
        }
      }),
    );
    return answers;
  }

  /** One claim for the takes of one endpoint and worker made together; answers each its jobs, in their order. */
  async #claim(takes: readonly TakeCall[]): Promise<Job[][]> {
    const { endpointId, workerId } = takes[0] as TakeCall;
    const now = Math.max(...takes.map((call) => call.now));
    const writes = this.#takeWrites.plan(endpointId, workerId, now);
    const asked = takes.reduce((sum, call) => sum + Math.max(0, call.max), 0);
    const ahead = Math.max(...takes.map((call) => call.ahead));
    const putBacks = this.#putBacks.get(endpointId) ?? 0;
    // While another harness listens, the claim notifies it in its own statement (statement-notices.ts); `publish` tells this process.
    // At most one statement a window notifies; the others' events ride on a later one.
    const notice = this.#notices?.begin();
    const notifyAs = notice?.notify === true ? { origin: this.#notices?.origin as string, carried: notice.carried } : undefined;
    let rows: postgres.RowList<postgres.Row[]>;
    try {
      rows = await claimJobs(this.#sql, endpointId, workerId, asked + ahead, now, writes, notifyAs);
    } catch (error) {
      notice?.done();
      throw error;
    }
    this.#takeWrites.taken(endpointId, workerId, now, writes);
    let events: StoreEvent[] = [];
    let taken: ClaimedJob[];
    try {
      taken = rows.map((row) => parseClaimedRow(row));
      // Each job as claimed, kept for its result (completion.ts), with its request's length as the driver read it.
      taken.forEach((claimed, index) => this.#taken.remember(claimed.job, claimed.ctid, requestChars(rows[index])));
      taken.sort((a, b) => a.queueSeq - b.queueSeq);
      events = claimEvents(endpointId, workerId, taken);
    } finally {
      notice?.done(events);
    }
    this.#publish(events);
    const jobs = taken.map((claimed) => toDelivery(claimed.job));
    let next = 0;
    const answers = takes.map((call) => {
      const own = jobs.slice(next, next + Math.max(0, call.max));
      next += own.length;
      return own;
    });
    // What was claimed beyond the takes' `max`: held for the worker's next takes.
    const reserve = this.#reserves.get(`${endpointId}\u0000${workerId}`) ?? new Reserve(endpointId, workerId);
    if (ahead > 0) reserve.deep = taken.length >= asked + ahead;
    // Its endpoint deleted meanwhile (the reserve forgotten), or a job put back in the queue
    // while the claim ran (older than what it claimed ahead): back to the queue at once.
    if (!this.#reserves.has(`${endpointId}\u0000${workerId}`) || (this.#putBacks.get(endpointId) ?? 0) !== putBacks)
      void this.#giveBackJobs(reserve, jobs.slice(next));
    else this.#hold(reserve, jobs.slice(next), this.#clock.now());
    return answers;
  }
}

/** The characters of a claimed row's request text (0 when the driver answered none). */
function requestChars(row: unknown): number {
  const request = (row as { request?: unknown } | undefined)?.request;
  return typeof request === 'string' ? request.length : 0;
}

/** A claim's events: each job's 'changed' (IN_PROGRESS, its deadline), and the worker's when it took any. */
function claimEvents(endpointId: string, workerId: string, taken: readonly ClaimedJob[]): StoreEvent[] {
  const events: StoreEvent[] = taken.map((claimed) => ({
    type: 'changed',
    endpointId,
    jobId: claimed.job.id,
    status: 'IN_PROGRESS',
    due: claimed.due,
  }));
  if (taken.length > 0) events.push({ type: 'worker', endpointId, workerId });
  return events;
}
