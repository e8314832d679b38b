/**
 * ChunkPoster: strict order, one post at a time, and (coalesceStreamChunks) joining of
 * plain string chunks that wait behind a post in flight; then the option end to end
 * through the worker runtime, with a transport whose chunk posts are slow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest, type StreamChunk } from '../../src/job/index.js';
import { createLogger } from '../../src/log/index.js';
import { InProcessTransport } from '../../src/transports/index.js';
import { ChunkPoster } from '../../src/worker/chunk-poster.js';
import { WorkerRuntime, resolveOptions, withMetrics, type Handler } from '../../src/worker/index.js';
import { waitFor } from '../kit/index.js';

/** A post function that holds each post until `release()` is called, recording what it got. */
function heldPosts(): { post: (chunk: StreamChunk) => Promise<void>; posted: StreamChunk[]; release: () => void; waiting: () => number } {
  const posted: StreamChunk[] = [];
  const gates: Array<() => void> = [];
  return {
    posted,
    post: (chunk) =>
      new Promise<void>((resolve) => {
        posted.push(chunk);
        gates.push(resolve);
      }),
    release: () => gates.shift()?.(),
    waiting: () => gates.length,
  };
}

const text = (i: number): StreamChunk => ({ output: `t${i} `, metrics: { stream_index: i } });

describe('ChunkPoster', () => {
  it('posts in order, one at a time, and never joins unless asked', async () => {
    const held = heldPosts();
    const poster = new ChunkPoster(held.post);
    await poster.push(text(0), true);
    await poster.push(text(1), true);
    expect(poster.tryAppend('more')).toBe(false);
    await sleep(0);
    expect(held.posted).toHaveLength(1);
    held.release();
    await sleep(0);
    held.release();
    await poster.flush();
    expect(held.posted.map((c) => c.output)).toEqual(['t0 ', 't1 ']);
  });

  it('joins text onto the chunk waiting behind a post in flight, never onto the one in flight', async () => {
    const held = heldPosts();
    const poster = new ChunkPoster(held.post, { joinUpToBytes: 1024 });
    await poster.push(text(0), true);
    await sleep(0);
    // t0 is in flight: nothing waits, so nothing can be joined.
    expect(poster.tryAppend('x')).toBe(false);
    await poster.push(text(1), true);
    expect(poster.tryAppend('t2 ')).toBe(true);
    expect(poster.tryAppend('t3 ')).toBe(true);
    // A chunk that is not joinable (a value with metrics, a part of a split yield) starts a new one.
    await poster.push({ output: 'm', metrics: { stream_index: 2, output_tokens: 1 } }, false);
    expect(poster.tryAppend('t5 ')).toBe(false);
    for (let i = 0; i < 3; i++) {
      held.release();
      await sleep(0);
    }
    await poster.flush();
    expect(held.posted).toEqual([
      { output: 't0 ', metrics: { stream_index: 0 } },
      { output: 't1 t2 t3 ', metrics: { stream_index: 1 } },
      { output: 'm', metrics: { stream_index: 2, output_tokens: 1 } },
    ]);
  });

  it('keeps a joined chunk within the size limit', async () => {
    const held = heldPosts();
    const limit = 64;
    const poster = new ChunkPoster(held.post, { joinUpToBytes: limit });
    await poster.push(text(0), true);
    await poster.push({ output: 'a', metrics: { stream_index: 1 } }, true);
    let joined = 0;
    while (poster.tryAppend('a')) joined++;
    expect(joined).toBeGreaterThan(0);
    const waiting = 'a'.repeat(joined + 1);
    // Any text of this length fits the limit once JSON-escaped, whatever its characters.
    expect(waiting.length * 6 + 2).toBeLessThanOrEqual(limit);
    held.release();
    await sleep(0);
    held.release();
    await poster.flush();
    expect(held.posted[1]?.output).toBe(waiting);
  });
});

/** The in-process transport with every chunk post taking a few ms, as over a network. */
class SlowChunkTransport extends InProcessTransport {
  override async postChunk(jobId: string, chunk: StreamChunk): Promise<void> {
    await sleep(2);
    await super.postChunk(jobId, chunk);
  }
}

const tokens: Handler<unknown> = async function* () {
  for (let i = 0; i < 200; i++) yield `tok${i} `;
  yield withMetrics('end', { output_tokens: 201 });
  yield { done: true };
};

describe('coalesceStreamChunks through the runtime', () => {
  const stops: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  /** `coalesce` undefined: the default options. */
  async function streamOnce(
    coalesce: boolean | undefined,
    handler: Handler<unknown> = tokens,
  ): Promise<{ chunks: StreamChunk[]; output: unknown; status: string }> {
    const harness = new Harness();
    const endpoint = harness.endpoint('coalesce');
    const transport = new SlowChunkTransport({ endpoint });
    const config = resolveOptions({ ...(coalesce !== undefined ? { coalesceStreamChunks: coalesce } : {}), aggregateStream: true, gpuSampling: false });
    const runtime = new WorkerRuntime(handler, config, transport, createLogger({ level: 'silent' }));
    void runtime.start();
    stops.push(async () => {
      await runtime.stop();
      await harness.close();
    });
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    const view = await endpoint.waitForEnd(id, 20_000);
    return { chunks: (await endpoint.readStream(id)).stream, output: view.output, status: view.status };
  }

  const expectedText = Array.from({ length: 200 }, (_, i) => `tok${i} `).join('');

  it('off: one chunk per yield', async () => {
    const { chunks, status } = await streamOnce(false);
    expect(status).toBe('COMPLETED');
    expect(chunks).toHaveLength(202);
    expect(chunks.map((c) => c.metrics?.stream_index)).toEqual(Array.from({ length: 202 }, (_, i) => i));
  });

  it('on by default: fewer chunks, the same text, contiguous stream_index, other values and metrics kept apart', async () => {
    expect(resolveOptions({}).coalesceStreamChunks).toBe(true);
    const { chunks, output, status } = await streamOnce(undefined);
    expect(status).toBe('COMPLETED');
    expect(chunks.length).toBeLessThan(100);
    expect(chunks.map((c) => c.metrics?.stream_index)).toEqual(chunks.map((_, i) => i));
    const strings = chunks.slice(0, -2).map((c) => c.output as string);
    expect(strings.join('')).toBe(expectedText);
    expect(chunks.at(-2)).toEqual({ output: 'end', metrics: { output_tokens: 201, stream_index: chunks.length - 2, attempt: 1 } });
    expect(chunks.at(-1)).toEqual({ output: { done: true }, metrics: { stream_index: chunks.length - 1, attempt: 1 } });
    // The aggregate is of yields, not chunks: every yield is there as it was yielded.
    expect((output as unknown[]).length).toBe(202);
  });

  it('keeps every joined chunk within 1 MiB and the text exact when large yields come fast', async () => {
    const piece = (i: number): string => String.fromCharCode(97 + (i % 26)).repeat(150_000);
    const { chunks, status } = await streamOnce(undefined, async function* () {
      for (let i = 0; i < 40; i++) yield piece(i);
    });
    expect(status).toBe('COMPLETED');
    for (const chunk of chunks) expect(Buffer.byteLength(JSON.stringify(chunk.output))).toBeLessThanOrEqual(1_048_576);
    expect(chunks.map((c) => c.output as string).join('')).toBe(Array.from({ length: 40 }, (_, i) => piece(i)).join(''));
    expect(chunks.map((c) => c.metrics?.stream_index)).toEqual(chunks.map((_, i) => i));
  });
});

describe('ChunkPoster with a window', () => {
  const object = (i: number): StreamChunk => ({ output: { i }, metrics: { stream_index: i } });

  it('keeps up to `window` posts in flight, in queue order; a joinable text chunk goes only when none is', async () => {
    const held = heldPosts();
    const poster = new ChunkPoster(held.post, { window: 3, joinUpToBytes: 1_000 });
    for (let i = 0; i < 5; i++) await poster.push(object(i));
    await waitFor(() => held.waiting() === 3, 'three posts in flight');
    expect(held.posted.map((chunk) => chunk.output)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    await poster.push(text(5), true);
    held.release();
    await waitFor(() => held.posted.length === 4, 'the fourth post, once one settled');
    held.release();
    held.release();
    await waitFor(() => held.posted.length === 5, 'the fifth post');
    // The text chunk waits (and may be joined) until nothing is in flight.
    expect(poster.tryAppend('joined')).toBe(true);
    held.release();
    await sleep(0);
    expect(held.posted).toHaveLength(5); // chunk 4 still in flight
    held.release();
    await waitFor(() => held.posted.length === 6, 'the text chunk, alone');
    expect(held.waiting()).toBe(1);
    expect(held.posted[5]?.output).toBe('t5 joined');
    held.release();
    await poster.flush();
    expect(poster.posted).toBe(6);
  });

  it('rejects flush with the first failure at once, not waiting for the posts still in flight', async () => {
    const gates: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
    const poster = new ChunkPoster(() => new Promise<void>((resolve, reject) => gates.push({ resolve, reject })), { window: 4 });
    for (let i = 0; i < 3; i++) await poster.push(object(i));
    await waitFor(() => gates.length === 3, 'three posts in flight');
    gates[0]?.reject(new Error('refused'));
    await expect(poster.flush()).rejects.toThrow('refused');
    // Those in flight settle later, without effect.
    gates[1]?.resolve();
    gates[2]?.resolve();
  });
});

describe('ChunkPoster with batches', () => {
  const object = (i: number): StreamChunk => ({ output: { i }, metrics: { stream_index: i } });
  const indexes = (chunks: readonly StreamChunk[]) => chunks.map((chunk) => chunk.metrics?.stream_index);

  it('a post carries the chunks queued when it goes out, at most `perPost`, with at most `inFlight` chunks in flight over all posts; a joinable chunk goes alone', async () => {
    const posts: StreamChunk[][] = [];
    const gates: Array<() => void> = [];
    let chunksInFlight = 0;
    let mostChunks = 0;
    let mostPosts = 0;
    const hold = (chunks: readonly StreamChunk[]) =>
      new Promise<void>((resolve) => {
        posts.push([...chunks]);
        chunksInFlight += chunks.length;
        mostChunks = Math.max(mostChunks, chunksInFlight);
        gates.push(() => {
          chunksInFlight -= chunks.length;
          resolve();
        });
        mostPosts = Math.max(mostPosts, gates.length);
      });
    const poster = new ChunkPoster((chunk) => hold([chunk]), { window: 4, joinUpToBytes: 1_000, batch: { perPost: 3, inFlight: 5, post: hold } });
    for (let i = 0; i < 9; i++) await poster.push(object(i));
    await waitFor(() => gates.length === 4, 'the window full');
    await poster.push(text(9), true);
    // Land the posts one by one until everything is posted.
    let flushed = false;
    const flush = poster.flush().then(() => (flushed = true));
    while (!flushed) {
      gates.shift()?.();
      await sleep(0);
    }
    await flush;
    expect(indexes(posts.flat())).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(posts.some((post) => post.length > 1)).toBe(true);
    expect(Math.max(...posts.map((post) => post.length))).toBeLessThanOrEqual(3);
    expect(mostPosts).toBeLessThanOrEqual(4);
    expect(mostChunks).toBeLessThanOrEqual(5);
    // The text chunk, joinable, went alone.
    expect(posts.find((post) => post.some((chunk) => chunk.metrics?.stream_index === 9))).toHaveLength(1);
    expect(poster.posted).toBe(10);
  });
});
