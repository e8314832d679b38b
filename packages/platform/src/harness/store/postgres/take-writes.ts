/**
 * @module harness/store/postgres/take-writes
 * What a take statement must write besides the claim (issue 33, item 2): the endpoint's
 * row only while this store does not know it exists, and the worker's presence at most
 * once every PRESENCE_WRITE_MS per worker (a busy worker takes many times a second; each
 * take rewrote its presence row, which no index-free HOT update could absorb).
 *
 * What this costs: a worker's `lastSeenAt` lags its latest take by under a second (the
 * liveness sweep's windows are several seconds, and heartbeats write it anyway). Every
 * other write of a worker's presence (touchWorker, removal, the sweep) makes the next
 * take write it again, so a take still clears `initializing` that a touch set. A worker
 * or endpoint deleted by another harness is written again by this one's next take once
 * the second is over (endpoint: at its next submit or createEndpoint, or a resync).
 */

/** The shortest time between two presence writes of one worker by takes, ms. */
export const PRESENCE_WRITE_MS = 1_000;

/** Workers remembered at most (the oldest are forgotten first: they are written again). */
const MAX_WORKERS = 10_000;

export class TakeWrites {
  readonly #endpoints = new Set<string>();
  /** By endpoint and worker: the `now` of the take that last wrote its presence. */
  readonly #written = new Map<string, number>();

  /** What the take of `workerId` at `now` must write. */
  plan(endpointId: string, workerId: string, now: number): { readonly endpoint: boolean; readonly worker: boolean } {
    const written = this.#written.get(key(endpointId, workerId));
    return { endpoint: !this.#endpoints.has(endpointId), worker: written === undefined || now - written >= PRESENCE_WRITE_MS || now < written };
  }

  /** The take committed with `writes`. */
  taken(endpointId: string, workerId: string, now: number, writes: { readonly worker: boolean }): void {
    this.#endpoints.add(endpointId);
    if (!writes.worker) return;
    const id = key(endpointId, workerId);
    this.#written.delete(id);
    this.#written.set(id, now);
    if (this.#written.size > MAX_WORKERS) this.#written.delete(this.#written.keys().next().value as string);
  }

  /** The endpoint exists (a submit or createEndpoint committed). */
  endpointExists(endpointId: string): void {
    this.#endpoints.add(endpointId);
  }

  /** The endpoint may not exist any more (deleted; or events missed: resync). */
  forgetEndpoint(endpointId: string): void {
    this.#endpoints.delete(endpointId);
    for (const id of [...this.#written.keys()]) if (id.startsWith(`${endpointId}\u0000`)) this.#written.delete(id);
  }

  /** The worker's presence was written otherwise (touched, removed, swept): the next take writes it. */
  forgetWorker(endpointId: string, workerId: string): void {
    this.#written.delete(key(endpointId, workerId));
  }

  forgetAll(): void {
    this.#endpoints.clear();
    this.#written.clear();
  }
}

const key = (endpointId: string, workerId: string): string => `${endpointId}\u0000${workerId}`;
