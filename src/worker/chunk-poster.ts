/**
 * @module worker/chunk-poster
 * Posts the chunks of one job strictly in order, one at a time: while a post is in
 * flight later chunks wait in a bounded queue, and a generator that outruns the
 * transport is held back (push waits) instead of growing memory without bound.
 */
import type { StreamChunk } from '../job/index.js';

export class ChunkPoster {
  readonly #post: (chunk: StreamChunk) => Promise<void>;
  readonly #highWaterMark: number;
  readonly #queue: StreamChunk[] = [];
  #draining: Promise<void> | undefined;
  #error: unknown;
  #posted = 0;

  /** `highWaterMark`: chunks queued before push waits; default 64. */
  constructor(post: (chunk: StreamChunk) => Promise<void>, highWaterMark = 64) {
    this.#post = post;
    this.#highWaterMark = highWaterMark;
  }

  /** Queue a chunk; resolves at once unless the queue is full. Rejects once a post has failed for good. */
  async push(chunk: StreamChunk): Promise<void> {
    if (this.#error !== undefined) throw this.#error;
    this.#queue.push(chunk);
    this.#draining ??= this.#drain();
    if (this.#queue.length >= this.#highWaterMark) await this.#draining;
    if (this.#error !== undefined) throw this.#error;
  }

  /** Resolves when every queued chunk has been posted; rejects with the post error if one failed. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
    if (this.#error !== undefined) throw this.#error;
  }

  get posted(): number {
    return this.#posted;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const chunk = this.#queue.shift() as StreamChunk;
        await this.#post(chunk);
        this.#posted++;
      }
    } catch (error) {
      this.#error = error;
      this.#queue.length = 0;
    } finally {
      this.#draining = undefined;
    }
  }
}
