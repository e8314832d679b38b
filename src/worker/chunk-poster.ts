/**
 * @module worker/chunk-poster
 * Posts the chunks of one job strictly in order, one at a time: while a post is in
 * flight later chunks wait in a bounded queue, and a generator that outruns the
 * transport is held back (push waits) instead of growing memory without bound.
 *
 * Coalescing (the worker's `coalesceStreamChunks` option): a chunk pushed as
 * `joinable` (the whole of a plain string yield) that is still waiting when the next
 * joinable text comes is extended with that text instead of queueing another chunk,
 * as long as the joined text stays within the chunk size limit. Nothing waits when no
 * post is in flight, so text is never held back to be joined: it is joined only while
 * the transport is busy, and the stream then carries fewer, larger chunks with the
 * same text.
 *
 * Window (the transport's `chunkWindow`): up to that many posts in flight at once, in
 * the order queued, for a receiver that stores chunks by their `stream_index` whatever
 * order the posts arrive in (our harness). A post of a round trip each bounds a stream
 * of objects, which cannot be joined, to one chunk per round trip. A joinable chunk is
 * still posted alone (it waits until nothing is in flight), so text keeps being joined
 * as before. A failed post ends the stream: nothing more is started, and push/flush
 * reject with the first failure at once (posts still in flight go on in the transport).
 *
 * Batches (the transport's `chunkBatch`): where the receiver takes several chunks in one
 * post (our harness), a post that goes out carries the chunks queued at that moment, up
 * to `perPost`, and at most `inFlight` chunks are in flight over all posts (the harness
 * holds a chunk that came early only that far ahead of the next it expects). A joinable
 * chunk still goes alone. In window or batch mode a full queue holds push back only until
 * a post takes chunks from it, not until the whole queue has drained.
 */
import type { Job, StreamChunk } from '../job/index.js';
import type { Transport } from '../transports/index.js';

interface Queued {
  chunk: StreamChunk;
  /** The text of this chunk may be extended (see tryAppend). */
  readonly joinable: boolean;
}

/** Several chunks in one post (see the module doc). */
export interface ChunkBatching {
  /** Most chunks in one post; at least 2. */
  readonly perPost: number;
  /** Most chunks in flight over all posts. */
  readonly inFlight: number;
  /** Posts `chunks` (2 or more, in order) as one post; settles as postChunk does. */
  readonly post: (chunks: readonly StreamChunk[]) => Promise<void>;
}

export interface ChunkPosterOptions {
  /** Chunks queued before push waits; default 64. */
  readonly highWaterMark?: number;
  /** Largest serialized output of a joined chunk, bytes; default 0 (no joining). */
  readonly joinUpToBytes?: number;
  /** Posts in flight at once; default 1 (one at a time). */
  readonly window?: number;
  /** Several chunks in one post; default none (one chunk a post). */
  readonly batch?: ChunkBatching;
}

/** JSON escapes one UTF-16 unit to at most 6 bytes: text this long always fits in `bytes`. */
function alwaysFits(units: number, bytes: number): boolean {
  return units * 6 + 2 <= bytes;
}

export class ChunkPoster {
  readonly #post: (chunk: StreamChunk) => Promise<void>;
  readonly #highWaterMark: number;
  readonly #joinUpToBytes: number;
  readonly #window: number;
  readonly #batch: ChunkBatching | undefined;
  readonly #queue: Queued[] = [];
  /** Pushes waiting for room in the queue (window or batch mode). */
  readonly #waitingForRoom: Array<() => void> = [];
  #draining: Promise<void> | undefined;
  /** Wakes a windowed drain waiting for a post to settle: a chunk was pushed. */
  #kick: (() => void) | undefined;
  #error: unknown;
  #posted = 0;

  /** `options`: a highWaterMark number (chunks queued before push waits; default 64), or ChunkPosterOptions. */
  constructor(post: (chunk: StreamChunk) => Promise<void>, options: number | ChunkPosterOptions = {}) {
    const resolved = typeof options === 'number' ? { highWaterMark: options } : options;
    this.#post = post;
    this.#highWaterMark = resolved.highWaterMark ?? 64;
    this.#joinUpToBytes = resolved.joinUpToBytes ?? 0;
    this.#window = Math.max(1, Math.floor(resolved.window ?? 1));
    this.#batch = resolved.batch !== undefined && resolved.batch.perPost >= 2 && resolved.batch.inFlight >= 1 ? resolved.batch : undefined;
  }

  /** One post at a time, one chunk each: the path of a platform that advertises nothing. */
  get #single(): boolean {
    return this.#window === 1 && this.#batch === undefined;
  }

  /**
   * Queue a chunk; resolves at once unless the queue is full. Rejects once a post has
   * failed for good. `joinable`: its output is a string that later text may extend
   * (only when joining is on).
   */
  async push(chunk: StreamChunk, joinable = false): Promise<void> {
    if (this.#error !== undefined) throw this.#error;
    this.#queue.push({ chunk, joinable: joinable && this.#joinUpToBytes > 0 && typeof chunk.output === 'string' });
    this.#draining ??= this.#drain();
    this.#kick?.();
    if (this.#queue.length >= this.#highWaterMark) {
      if (this.#single) await this.#draining;
      else await new Promise<void>((resolve) => this.#waitingForRoom.push(resolve));
    }
    if (this.#error !== undefined) throw this.#error;
  }

  /**
   * Join `text` onto the last chunk still waiting, if it is joinable and the joined
   * text fits; answers whether it did (if not, push the text as a chunk of its own).
   * A chunk already in flight is never changed.
   */
  tryAppend(text: string): boolean {
    if (this.#joinUpToBytes === 0 || this.#error !== undefined) return false;
    const last = this.#queue[this.#queue.length - 1];
    if (last === undefined || !last.joinable) return false;
    const joined = (last.chunk.output as string) + text;
    if (!alwaysFits(joined.length, this.#joinUpToBytes)) return false;
    last.chunk = { ...last.chunk, output: joined };
    return true;
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
      if (this.#single) {
        while (this.#queue.length > 0) {
          const { chunk } = this.#queue.shift() as Queued;
          await this.#post(chunk);
          this.#posted++;
        }
        return;
      }
      await this.#drainWindow();
    } catch (error) {
      this.#error = error;
      this.#queue.length = 0;
    } finally {
      this.#draining = undefined;
      this.#wakeWaitingForRoom();
    }
  }

  /** Pushes waiting for room go on: the queue is below its mark, or the drain has ended. */
  #wakeWaitingForRoom(): void {
    if (this.#waitingForRoom.length === 0) return;
    if (this.#queue.length >= this.#highWaterMark && this.#draining !== undefined) return;
    for (const resume of this.#waitingForRoom.splice(0)) resume();
  }

  /**
   * The chunks the next post carries, taken from the queue: a joinable chunk alone; else
   * one chunk, or in batch mode the chunks queued now up to `perPost` and what is left of
   * `inFlight` ([] when nothing is left of it).
   */
  #nextPost(chunksInFlight: number): StreamChunk[] {
    const head = this.#queue[0] as Queued;
    if (head.joinable || this.#batch === undefined) return [(this.#queue.shift() as Queued).chunk];
    const room = Math.min(this.#batch.perPost, this.#batch.inFlight - chunksInFlight);
    const chunks: StreamChunk[] = [];
    while (chunks.length < room && this.#queue.length > 0 && !(this.#queue[0] as Queued).joinable) chunks.push((this.#queue.shift() as Queued).chunk);
    return chunks;
  }

  /** Up to `window` posts at once (batch mode: of up to `perPost` chunks each); a joinable chunk only when none is in flight. Throws the first failure. */
  async #drainWindow(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let chunksInFlight = 0;
    let failed: { error: unknown } | undefined;
    for (;;) {
      while (failed === undefined && inFlight.size < this.#window && this.#queue.length > 0) {
        if ((this.#queue[0] as Queued).joinable && inFlight.size > 0) break;
        const chunks = this.#nextPost(chunksInFlight);
        if (chunks.length === 0) break;
        chunksInFlight += chunks.length;
        const settled = (): void => {
          chunksInFlight -= chunks.length;
          inFlight.delete(post);
        };
        const sent = chunks.length === 1 ? this.#post(chunks[0] as StreamChunk) : (this.#batch as ChunkBatching).post(chunks);
        const post: Promise<void> = sent.then(
          () => {
            this.#posted += chunks.length;
            settled();
          },
          (error: unknown) => {
            failed ??= { error };
            settled();
          },
        );
        inFlight.add(post);
        this.#wakeWaitingForRoom();
      }
      // Failed: not waiting for the posts still in flight. Those past the failed chunk are
      // held by the harness until the job ends, and it ends with the result this failure
      // lets the run post now (then they are answered, not applied).
      if (inFlight.size === 0 || failed !== undefined) break;
      // A post settling, or a chunk pushed meanwhile (a free slot may take it now).
      await new Promise<void>((resolve) => {
        this.#kick = resolve;
        void Promise.race(inFlight).then(resolve);
      });
      this.#kick = undefined;
    }
    if (failed !== undefined) throw failed.error;
  }
}

/**
 * The poster of one run's stream chunks through `transport`: its window, and batches where
 * it offers them (transport.ts: only where the other side orders chunks by stream_index and
 * takes several in one post). `joinUpToBytes`: coalesceStreamChunks' limit, 0 for none.
 */
export function chunkPosterFor(transport: Transport, job: Pick<Job, 'id' | 'attempt'>, joinUpToBytes: number): ChunkPoster {
  const batch = transport.chunkBatch;
  const postChunks = transport.postChunks?.bind(transport);
  return new ChunkPoster((chunk) => transport.postChunk(job.id, chunk, job.attempt), {
    joinUpToBytes,
    window: transport.chunkWindow ?? 1,
    ...(batch !== undefined && postChunks !== undefined
      ? { batch: { ...batch, post: (chunks: readonly StreamChunk[]) => postChunks(job.id, chunks, job.attempt) } }
      : {}),
  });
}
