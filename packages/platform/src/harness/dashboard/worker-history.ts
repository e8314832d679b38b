/**
 * @module harness/dashboard/worker-history
 * Workers that were connected and left (issue 48 item 5): once launched workers scale to 0
 * the store holds no worker, and the Workers page said "No worker has reached the harness
 * yet" after 5 000 jobs. This keeps, in memory, the last DEPARTED_LIMIT workers that left:
 * id, endpoint, first and last seen, and the jobs each finished here.
 *
 * Presence is read from the store (every way a worker leaves ends there: a sweep of a
 * silent one, an in-process worker's close, a removal over the worker API), sampled every
 * `intervalMs` on the harness's clock while a worker is known to be there (so an idle
 * harness with no worker arms no timer: the first job ended, or a read of the Workers view
 * that finds one, starts the samples; a sample that finds none and knows none stops them),
 * and at each read of the Workers view; the jobs each ran are counted from the endpoints'
 * jobEnded (the jobs this process ended). A worker that came and went without finishing a
 * job here, while no page was open, is not listed.
 */
import { ranOn, repeatEvery, type Harness, type StoredJob, type TimerHandle } from 'serverless-worker/internal';

/** Departed workers kept, newest departure first. */
export const DEPARTED_LIMIT = 100;

export interface DepartedWorker {
  id: string;
  endpointId: string;
  /** ISO times: first heard from; last heard from (its last heartbeat, request or job end seen here). */
  firstSeenAt: string;
  lastSeenAt: string;
  /** ISO time this harness noticed it had gone (the sample after it left). */
  goneAt: string;
  /** Jobs it finished that this process ended (any outcome). */
  jobsDone: number;
}

/** What a sample reads of a worker present now. */
export interface PresentWorker {
  id: string;
  endpointId: string;
  firstSeenAt: number;
  lastSeenAt: number;
}

interface Known {
  id: string;
  endpointId: string;
  firstSeenAt: number;
  lastSeenAt: number;
  jobsDone: number;
}

const keyOf = (endpointId: string, workerId: string): string => `${endpointId}\u0000${workerId}`;
const iso = (ms: number): string => new Date(ms).toISOString();

export class WorkerHistory {
  readonly #harness: Harness;
  readonly #limit: number;
  readonly #known = new Map<string, Known>();
  #departed: DepartedWorker[] = [];
  #timer: TimerHandle | undefined;
  #intervalMs: number | undefined;
  #unbind: (() => void) | undefined;

  constructor(harness: Harness, limit = DEPARTED_LIMIT) {
    this.#harness = harness;
    this.#limit = limit;
  }

  /** Count jobs ended per worker and sample presence every `intervalMs` while a worker is known, until `stop()`. */
  start(intervalMs: number): void {
    if (this.#intervalMs !== undefined) return;
    this.#intervalMs = intervalMs;
    const disposers: Array<() => void> = [];
    const stopEndpoints = this.#harness.onEndpoint((endpoint) => {
      disposers.push(endpoint.jobEnded.add((job) => this.jobEnded(job)));
    });
    this.#unbind = () => {
      stopEndpoints();
      for (const dispose of disposers.splice(0)) dispose();
    };
  }

  /** Sample on the clock while a worker is known (arm), none otherwise (disarm). */
  #watch(anyone: boolean): void {
    if (anyone && !this.#timer && this.#intervalMs !== undefined) {
      this.#timer = repeatEvery(this.#harness.clock, this.#intervalMs, () => void this.sample().catch(() => {}));
    } else if (!anyone && this.#timer) {
      this.#timer.cancel();
      this.#timer = undefined;
    }
  }

  stop(): void {
    this.#intervalMs = undefined;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#unbind?.();
    this.#unbind = undefined;
  }

  /** Read every endpoint's workers from the store and observe them. */
  async sample(): Promise<void> {
    const present: PresentWorker[] = [];
    for (const endpoint of this.#harness.endpoints()) {
      for (const worker of await endpoint.workers.all())
        present.push({ id: worker.id, endpointId: endpoint.id, firstSeenAt: worker.firstSeenAt, lastSeenAt: worker.lastSeenAt });
    }
    this.observe(present, this.#harness.clock.now());
  }

  /**
   * The workers present now: each is known (and leaves the departed list if it came back);
   * a known worker absent now has left, at `now`.
   */
  observe(present: readonly PresentWorker[], now: number): void {
    const seen = new Set<string>();
    for (const worker of present) {
      const key = keyOf(worker.endpointId, worker.id);
      seen.add(key);
      const known = this.#known.get(key);
      if (known) {
        known.lastSeenAt = Math.max(known.lastSeenAt, worker.lastSeenAt);
        known.firstSeenAt = Math.min(known.firstSeenAt, worker.firstSeenAt);
      } else {
        this.#known.set(key, { ...worker, jobsDone: 0 });
        this.#departed = this.#departed.filter((d) => d.id !== worker.id || d.endpointId !== worker.endpointId);
      }
    }
    for (const [key, known] of this.#known) {
      if (seen.has(key)) continue;
      this.#known.delete(key);
      this.#departed.unshift({
        id: known.id,
        endpointId: known.endpointId,
        firstSeenAt: iso(known.firstSeenAt),
        lastSeenAt: iso(known.lastSeenAt),
        goneAt: iso(Math.max(now, known.lastSeenAt)),
        jobsDone: known.jobsDone,
      });
    }
    if (this.#departed.length > this.#limit) this.#departed.length = this.#limit;
    this.#watch(this.#known.size > 0);
  }

  /** A job ended: the worker that ran it did one more (and was there then, though no sample saw it). */
  jobEnded(job: StoredJob): void {
    const workerId = ranOn(job);
    if (!workerId) return;
    const key = keyOf(job.endpointId, workerId);
    const at = job.endedAt ?? this.#harness.clock.now();
    const known = this.#known.get(key);
    const departed = this.#departed.find((d) => d.id === workerId && d.endpointId === job.endpointId);
    if (known) {
      known.jobsDone += 1;
      known.lastSeenAt = Math.max(known.lastSeenAt, at);
    } else if (departed) {
      // Ended after its worker left (a sweep that failed the job it held): counted, not brought back.
      departed.jobsDone += 1;
    } else {
      this.#known.set(key, { id: workerId, endpointId: job.endpointId, firstSeenAt: job.startedAt ?? at, lastSeenAt: at, jobsDone: 1 });
    }
    this.#watch(true);
  }

  /** Jobs the worker finished here so far (present or departed). */
  jobsDone(endpointId: string, workerId: string): number {
    return (
      this.#known.get(keyOf(endpointId, workerId))?.jobsDone ?? this.#departed.find((d) => d.id === workerId && d.endpointId === endpointId)?.jobsDone ?? 0
    );
  }

  /** Workers that left, newest departure first. */
  departed(): DepartedWorker[] {
    return this.#departed.map((d) => ({ ...d }));
  }
}
