/**
 * @module transports/platform/chunk-posts
 * A job's stream chunks as job-stream posts: `POST <stream>&isStream=false` with
 * `{output, metrics}` (`{output}` alone with `chunkMetrics: false`), retried like a
 * result (deliver.ts), one chunk a post. What the platform's job-take answer advertised
 * decides how many go at once (stream-order.ts):
 * - nothing (the real platform: its job-stream takes one `{output}` a post, and how it
 *   orders concurrent posts is not documented): one post at a time, one chunk each;
 * - `x-sw-stream-order: stream_index` (our harness stores chunks by index, holding one
 *   that came early): up to `chunkWindow` posts in flight;
 * - and `x-sw-stream-batch: N`: a post may carry several chunks as a JSON array of the
 *   same `{output, metrics}` items, each its own chunk on `/stream`; at most
 *   min(chunkBatch, N) in one post, N in flight over all posts, and 2 posts in flight
 *   (chunkWindow if lower), so that chunks gather behind them. A body stays within
 *   1 MiB: chunks that would make it larger go in the next post (a chunk alone in its
 *   post goes in the one-chunk form, byte for byte as without batches).
 *
 * Chunk metrics: the platform builds a job's `/stream` from each post's `output`;
 * `metrics` is an extra key beside it (the platform, as far as is known, ignores
 * unknown keys). The local harness keeps it, so `/stream` shows the same chunks through
 * this transport as in process, and uses `metrics.stream_index` to store a chunk whose
 * post was retried only once.
 */
import { MAX_CHUNK_BYTES } from '../../job/limits.js';
import { ServerlessWorkerError, type StreamChunk } from '../../job/index.js';
import { STREAM_ORDER_VALUE, readStreamBatch } from '../../job/stream-order.js';
import type { HttpAnswer } from './http-client.js';
import type { PlatformTransportSettings } from './options.js';
import type { PlatformUrls } from './urls.js';

/**
 * Posts in flight at once when they carry several chunks: while they are, the chunks the
 * handler yields queue and go in the next post together. With the whole window of 16,
 * most posts left with the one chunk queued at that moment (a 1 000-object stream went
 * in about 280 posts instead of 17-33, and took 2-4x as long: bench/README, issue 46).
 * Two, not one, so that a post's round trip overlaps the next one's filling.
 */
const BATCH_POSTS_IN_FLIGHT = 2;

/** Largest batch body, bytes of its items' JSON: a chunk that would take a body past it starts the next post. */
const MAX_BATCH_BODY_BYTES = MAX_CHUNK_BYTES;

export interface ChunkPostsOptions {
  readonly urls: PlatformUrls;
  readonly settings: PlatformTransportSettings;
  /** Posts `body` to `url` until it lands (the transport's retried delivery). */
  readonly deliver: (url: string, body: string, jobId: string, what: string) => Promise<unknown>;
}

/** One item of a post, serialized once. */
interface Item {
  readonly text: string;
  readonly bytes: number;
}

export class ChunkPosts {
  readonly #urls: PlatformUrls;
  readonly #settings: PlatformTransportSettings;
  readonly #deliver: ChunkPostsOptions['deliver'];
  /** The last job-take answer that handed out jobs advertised chunk ordering by stream_index. */
  #ordered = false;
  /** What it advertised in x-sw-stream-batch; 0: no batches. */
  #advertisedBatch = 0;

  constructor(options: ChunkPostsOptions) {
    this.#urls = options.urls;
    this.#settings = options.settings;
    this.#deliver = options.deliver;
  }

  /** A job-take answer that handed out jobs: what it advertises holds for their streams. */
  heard(answer: HttpAnswer): void {
    this.#ordered = answer.streamOrder === STREAM_ORDER_VALUE;
    this.#advertisedBatch = readStreamBatch(answer.streamBatch);
  }

  /**
   * Posts of one job in flight at once: `chunkWindow` once ordering was advertised and
   * chunks carry their index (chunkMetrics), at most BATCH_POSTS_IN_FLIGHT with batches;
   * else 1.
   */
  get window(): number {
    if (!this.#ordered || !this.#settings.chunkMetrics) return 1;
    return this.batch === undefined ? this.#settings.chunkWindow : Math.min(this.#settings.chunkWindow, BATCH_POSTS_IN_FLIGHT);
  }

  /** Chunks in one post and in flight, once batches were advertised besides ordering; undefined: one chunk a post. */
  get batch(): { readonly perPost: number; readonly inFlight: number } | undefined {
    if (!this.#ordered || !this.#settings.chunkMetrics || this.#advertisedBatch < 2) return undefined;
    const perPost = Math.min(this.#settings.chunkBatch, this.#advertisedBatch);
    return perPost >= 2 ? { perPost, inFlight: this.#advertisedBatch } : undefined;
  }

  /** One chunk in one post. */
  async post(jobId: string, chunk: StreamChunk, attempt?: number): Promise<void> {
    const index = chunk.metrics?.stream_index;
    await this.#deliver(this.#url(jobId, attempt), this.#itemText(chunk), jobId, typeof index === 'number' ? `stream chunk ${index}` : 'stream chunk');
  }

  /** Consecutive chunks in as few posts as the body bound allows, one after the other. */
  async postMany(jobId: string, chunks: readonly StreamChunk[], attempt?: number): Promise<void> {
    const url = this.#url(jobId, attempt);
    const first = chunks[0]?.metrics?.stream_index;
    // The batch form needs every index (the harness checks they follow each other).
    if (this.batch === undefined || typeof first !== 'number' || chunks.some((chunk) => typeof chunk.metrics?.stream_index !== 'number')) {
      for (const chunk of chunks) await this.post(jobId, chunk, attempt);
      return;
    }
    let from = first;
    for (const body of this.#bodies(chunks)) {
      const count = body.length;
      if (count === 1) await this.#deliver(url, (body[0] as Item).text, jobId, `stream chunk ${from}`);
      else await this.#deliver(url, `[${body.map((item) => item.text).join(',')}]`, jobId, `stream chunks ${from}-${from + count - 1}`);
      from += count;
    }
  }

  /** The items of `chunks` cut into bodies of at most MAX_BATCH_BODY_BYTES (a larger item alone). */
  #bodies(chunks: readonly StreamChunk[]): Item[][] {
    const bodies: Item[][] = [];
    let body: Item[] = [];
    let bytes = 0;
    for (const chunk of chunks) {
      const text = this.#itemText(chunk);
      const item = { text, bytes: Buffer.byteLength(text) };
      if (body.length > 0 && bytes + item.bytes + 1 > MAX_BATCH_BODY_BYTES) {
        bodies.push(body);
        body = [];
        bytes = 0;
      }
      body.push(item);
      bytes += item.bytes + 1;
    }
    if (body.length > 0) bodies.push(body);
    return bodies;
  }

  #itemText(chunk: StreamChunk): string {
    return JSON.stringify(
      this.#settings.chunkMetrics && chunk.metrics !== undefined ? { output: chunk.output, metrics: chunk.metrics } : { output: chunk.output },
    );
  }

  #url(jobId: string, attempt: number | undefined): string {
    const url = this.#urls.stream(jobId, attempt);
    if (url === undefined) {
      throw new ServerlessWorkerError(
        'SW_INVALID_ENV',
        'RUNPOD_WEBHOOK_POST_STREAM is not set, so stream chunks cannot be posted; set it to the job-stream URL (…/job-stream/$RUNPOD_POD_ID/$ID?)',
        { variable: 'RUNPOD_WEBHOOK_POST_STREAM' },
      );
    }
    return url;
  }
}
