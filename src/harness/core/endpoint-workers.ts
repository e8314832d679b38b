/**
 * @module harness/core/endpoint-workers
 * The workers of one endpoint as the facade shows them (`endpoint.workers`): presence
 * kept by the job store (so that every harness process sharing a store sees the same
 * workers), read and touched on the harness's clock.
 */
import type { Clock } from '../../clock/index.js';
import type { GoneWorker, JobStore, RequeueRules, StoredWorker, TouchWorker } from '../store/job-store.js';

export class EndpointWorkers {
  readonly #endpointId: string;
  readonly #store: JobStore;
  readonly #clock: Clock;
  readonly #rules: RequeueRules;
  readonly #onGone: (gone: GoneWorker) => void;

  constructor(endpointId: string, store: JobStore, clock: Clock, rules: RequeueRules, onGone: (gone: GoneWorker) => void) {
    this.#endpointId = endpointId;
    this.#store = store;
    this.#clock = clock;
    this.#rules = rules;
    this.#onGone = onGone;
  }

  /** Record that `workerId` was heard from now (at `at` when given). */
  touch(workerId: string, touch: TouchWorker = {}, at?: number): Promise<StoredWorker> {
    return this.#store.touchWorker(this.#endpointId, workerId, touch, at ?? this.#clock.now());
  }

  get(workerId: string): Promise<StoredWorker | undefined> {
    return this.#store.getWorker(this.#endpointId, workerId);
  }

  /** Every worker, first seen first. */
  all(): Promise<StoredWorker[]> {
    return this.#store.listWorkers(this.#endpointId);
  }

  /** The worker is gone: forget it, and put the jobs it held back in the queue. Answers undefined when it was not there. */
  async remove(workerId: string): Promise<GoneWorker | undefined> {
    const gone = await this.#store.removeWorker(this.#endpointId, workerId, this.#rules, this.#clock.now());
    if (gone) this.#onGone(gone);
    return gone;
  }

  /** Workers that can take jobs: idle (none held) and running; initializing ones are left out. */
  async counts(): Promise<{ idle: number; running: number }> {
    return (await this.#store.health(this.#endpointId)).workers;
  }

  /** Workers in their start-up phase (heard from, no job asked for yet). */
  async initializingCount(): Promise<number> {
    return (await this.all()).filter((worker) => worker.initializing && worker.jobIds.length === 0).length;
  }

  /** The worker asked for a job (or reported one): its start-up phase is over. */
  async markReady(workerId: string): Promise<void> {
    if (await this.get(workerId)) await this.touch(workerId, { initializing: false });
  }
}
