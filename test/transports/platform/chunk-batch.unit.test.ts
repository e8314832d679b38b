/**
 * Several chunks in one post (issue 46 item 4): a handler yielding objects faster than
 * its posts are answered sends the chunks queued when a post goes out as one JSON array,
 * only when the platform's job-take answer advertised it (`x-sw-stream-batch`, beside
 * `x-sw-stream-order`, our harness). Against a platform that advertises neither (the
 * real one), or ordering alone, every chunk has its own post in the one-chunk form, byte
 * for byte. The worker runtime with the platform transport against a scripted server on
 * 127.0.0.1 that holds the stream posts until the handler has yielded 65 objects (so
 * that chunks queue behind the posts in flight), then answers each.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_BATCH_HEADER, STREAM_ORDER_HEADER, STREAM_ORDER_VALUE } from '../../../src/job/stream-order.js';
import type { Handler, WorkerRuntime } from '../../../src/worker/index.js';
import { within } from '../../kit/index.js';
import { platformTransportAt, runOneJob, startOneJobPlatform } from '../../kit/platform-worker.js';
import { captureLogs } from './log-capture.js';
import { json, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
let runtime: WorkerRuntime | undefined;
let release: () => void = () => {};

afterEach(async () => {
  release();
  await runtime?.stop();
  runtime = undefined;
  await server?.close();
  server = undefined;
});

const COUNT = 200;
/** Yields the handler can make while every post is held: one in flight at least, and a queue of 64 (then push waits). */
const HELD_UNTIL_YIELDED = 65;

interface Item {
  readonly output: { n: number };
  readonly metrics: { stream_index: number };
}

async function runObjects(takeHeaders: Record<string, string>) {
  let yielded = 0;
  let released = false;
  let open = 0;
  let mostOpen = 0;
  const waiting: Array<() => void> = [];
  release = () => {
    released = true;
    for (const go of waiting.splice(0)) go();
  };
  const objects: Handler<unknown> = async function* () {
    for (let n = 0; n < COUNT; n++) {
      if (++yielded === HELD_UNTIL_YIELDED) release();
      yield { n };
    }
  };
  server = await startOneJobPlatform({
    takeHeaders,
    stream: async () => {
      mostOpen = Math.max(mostOpen, ++open);
      if (!released) await new Promise<void>((resolve) => waiting.push(resolve));
      open--;
      return json({ acknowledged: true, applied: true });
    },
  });
  const logs = captureLogs();
  const transport = platformTransportAt(server.origin, { logger: logs.logger });
  const run = runOneJob(objects, transport, logs.logger);
  runtime = run.runtime;
  const outcome = await within(run.outcome, 'the run to end', 30_000);
  const bodies = server.to('/job-stream/').map((request) => request.body);
  // Each post as the items it carried: an array's items, or the one chunk.
  const items = bodies.flatMap((body) => {
    const value = JSON.parse(body) as Item | Item[];
    return Array.isArray(value) ? value : [value];
  });
  return { outcome, bodies, items, transport, mostOpen };
}

const inOrder = (items: readonly Item[]) => ({
  outputs: items.map((item) => item.output.n),
  indexes: items.map((item) => item.metrics.stream_index),
});
const all = Array.from({ length: COUNT }, (_, n) => n);

describe('several stream chunks in one post', () => {
  it('sends fewer posts than chunks when the platform advertises batches, every chunk once, with its own stream_index, in order within a post', async () => {
    const run = await runObjects({ [STREAM_ORDER_HEADER]: STREAM_ORDER_VALUE, [STREAM_BATCH_HEADER]: '64' });
    expect(run.outcome).toMatchObject({ end: 'completed' });
    expect(run.bodies.length).toBeLessThan(COUNT);
    // Two posts in flight at most, so that chunks gather behind them.
    expect(run.transport.chunkWindow).toBe(2);
    expect(run.mostOpen).toBeLessThanOrEqual(2);
    expect(run.bodies.some((body) => body.startsWith('['))).toBe(true);
    // No post carries more than advertised.
    for (const body of run.bodies) if (body.startsWith('[')) expect((JSON.parse(body) as Item[]).length).toBeLessThanOrEqual(64);
    // Within a post the items are in order, their indexes consecutive; posts in flight at once
    // may arrive in any order (the harness stores by index), so across posts: by index.
    for (const body of run.bodies.filter((text) => text.startsWith('['))) {
      const { outputs, indexes } = inOrder(JSON.parse(body) as Item[]);
      expect(outputs).toEqual(indexes);
      expect(indexes).toEqual(indexes.map((_, at) => (indexes[0] as number) + at));
    }
    expect(inOrder([...run.items].sort((a, b) => a.metrics.stream_index - b.metrics.stream_index))).toEqual({ outputs: all, indexes: all });
  });

  it('posts every chunk on its own, in the one-chunk form, against a platform that advertises nothing (the real one)', async () => {
    const run = await runObjects({});
    expect(run.outcome).toMatchObject({ end: 'completed' });
    expect(run.bodies).toEqual(all.map((n) => `{"output":{"n":${n}},"metrics":{"stream_index":${n}}}`));
  });

  it('posts every chunk on its own when the platform advertises ordering but not batches', async () => {
    const run = await runObjects({ [STREAM_ORDER_HEADER]: STREAM_ORDER_VALUE });
    expect(run.outcome).toMatchObject({ end: 'completed' });
    expect(run.bodies).toHaveLength(COUNT);
    expect(run.bodies.every((body) => body.startsWith('{"output":'))).toBe(true);
    expect(new Set(run.items.map((item) => item.metrics.stream_index))).toEqual(new Set(all));
  });
});
