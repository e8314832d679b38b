/**
 * @module harness/core/chunk-order
 * Stream chunks stored in index order when a worker posts several at once. A worker that
 * keeps more than one job-stream post in flight (the platform transport's chunk window,
 * when the harness advertises ordering) may have chunk 5 arrive before chunk 4: the
 * store answers it `ahead` (post-rules.ts), and it is held here, its post unanswered,
 * until the job changes (chunk 4 stored, the job ended, requeued, a resync), then
 * offered to the store again. So a post is answered only once its chunk, and every
 * chunk before it, is stored: an ack still means stored, and /stream reads them in order.
 *
 * Bounded: a chunk more than MAX_CHUNKS_AHEAD past the next expected one, or one more
 * held for a job that already holds MAX_HELD_CHUNKS, is not held but answered `ahead`
 * at once (the worker API turns that into SW_STREAM_INDEX_AHEAD). A held chunk always
 * ends: its predecessors come, or the job leaves IN_PROGRESS (cancel, timeout, a lost
 * worker's requeue), which is a change that wakes it and the store then refuses it.
 */
import type { PostAck } from '../store/job-store.js';
import type { JobChangeListener } from './job-changes.js';

/** Furthest a chunk's index may be past the next expected one and still be held. */
export const MAX_CHUNKS_AHEAD = 64;
/** Most chunks held for one job at once. */
export const MAX_HELD_CHUNKS = 64;

export class ChunkOrder {
  /** Chunks held now, by job id. */
  readonly #held = new Map<string, number>();

  /** Chunks held now for `jobId` (tests, metrics). */
  heldFor(jobId: string): number {
    return this.#held.get(jobId) ?? 0;
  }

  /**
   * Offer a chunk to the store (`push`) until it is stored or refused for another
   * reason than being ahead; between offers wait for a change of the job
   * (`onJobChange`). The first offer subscribes to nothing (a chunk in order, the usual
   * case, costs one store call); a held one subscribes before each later offer, so a
   * change between the store's answer and the wait is not missed (a change before the
   * subscription is seen by that offer itself).
   */
  async post(
    jobId: string,
    index: number | undefined,
    push: () => Promise<PostAck>,
    onJobChange: (listener: JobChangeListener) => () => void,
  ): Promise<PostAck> {
    const first = await push();
    if (first.applied || first.reason !== 'ahead' || index === undefined) return first;
    if (index - first.expected > MAX_CHUNKS_AHEAD || this.heldFor(jobId) >= MAX_HELD_CHUNKS) return first;
    this.#held.set(jobId, this.heldFor(jobId) + 1);
    try {
      for (;;) {
        let wake: () => void = () => {};
        const changed = new Promise<void>((resolve) => (wake = resolve));
        const unsubscribe = onJobChange(() => wake());
        try {
          const ack = await push();
          if (ack.applied || ack.reason !== 'ahead') return ack;
          await changed;
        } finally {
          unsubscribe();
        }
      }
    } finally {
      const left = this.heldFor(jobId) - 1;
      if (left > 0) this.#held.set(jobId, left);
      else this.#held.delete(jobId);
    }
  }
}
