/**
 * The chunk window (issue 46 item 4): a handler yielding objects has several job-stream
 * posts in flight at once only when the platform's job-take answer advertised that it
 * stores chunks by `stream_index` (`x-sw-stream-order: stream_index`, our harness);
 * against a platform that does not (the real one), or with chunkMetrics off, one at a
 * time as before. The worker runtime with the platform transport against a scripted
 * server on 127.0.0.1 that counts the stream posts it holds open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_ORDER_HEADER, STREAM_ORDER_VALUE } from '../../../src/job/stream-order.js';
import type { Handler, WorkerRuntime } from '../../../src/worker/index.js';
import { waitFor, within } from '../../kit/index.js';
import { platformTransportAt, runOneJob, startOneJobPlatform } from '../../kit/platform-worker.js';
import { captureLogs } from './log-capture.js';
import { json, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
let runtime: WorkerRuntime | undefined;
let releaseAll: () => void = () => {};

afterEach(async () => {
  releaseAll();
  await runtime?.stop();
  runtime = undefined;
  await server?.close();
  server = undefined;
});

const COUNT = 12;

const objects: Handler<unknown> = async function* () {
  for (let n = 0; n < COUNT; n++) yield { n };
};

interface Setup {
  /** Job-take answers carry the ordering header. */
  advertise: boolean;
  /** Hold stream posts until this many are open at once (then answer them all); 0: answer each at once. */
  holdUntil: number;
  chunkMetrics?: boolean;
}

async function runOne({ advertise, holdUntil, chunkMetrics }: Setup) {
  let open = 0;
  let most = 0;
  const waiting: Array<() => void> = [];
  let released = false;
  releaseAll = () => {
    released = true;
    for (const go of waiting.splice(0)) go();
  };
  server = await startOneJobPlatform({
    takeHeaders: advertise ? { [STREAM_ORDER_HEADER]: STREAM_ORDER_VALUE } : {},
    stream: async () => {
      open++;
      most = Math.max(most, open);
      if (!released && holdUntil > 0) {
        if (open >= holdUntil) releaseAll();
        else await new Promise<void>((resolve) => waiting.push(resolve));
      }
      // One turn later, so that posts the worker has already sent can arrive meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      open--;
      return json({ acknowledged: true, applied: true });
    },
  });
  const logs = captureLogs();
  const transport = platformTransportAt(server.origin, { logger: logs.logger, ...(chunkMetrics !== undefined ? { chunkMetrics } : {}) });
  const run = runOneJob(objects, transport, logs.logger);
  runtime = run.runtime;
  const s = server;
  return {
    transport,
    outcome: run.outcome,
    most: () => most,
    posted: () => s.to('/job-stream/').map((request) => JSON.parse(request.body) as { output: unknown; metrics?: { stream_index?: number } }),
    results: () => s.to('/job-done/'),
  };
}

describe('the chunk window of a handler yielding objects', () => {
  it('keeps several posts in flight when the job-take answer advertises ordering by stream_index, then posts the result after all', async () => {
    const run = await runOne({ advertise: true, holdUntil: 4 });
    // Four posts open at once on the server: only a worker with a window gets there.
    await waitFor(() => run.most() >= 4, 'four job-stream posts open at once');
    expect(await within(run.outcome, 'the run to end', 20_000)).toMatchObject({ end: 'completed' });
    expect(run.transport.chunkWindow).toBe(16);
    expect(run.posted().map((chunk) => chunk.metrics?.stream_index)).toHaveLength(COUNT);
    expect(new Set(run.posted().map((chunk) => chunk.metrics?.stream_index))).toEqual(new Set(Array.from({ length: COUNT }, (_, n) => n)));
    expect(run.results()).toHaveLength(1);
  });

  it('posts one at a time, in order, against a platform that does not advertise', async () => {
    const run = await runOne({ advertise: false, holdUntil: 0 });
    expect(await within(run.outcome, 'the run to end', 20_000)).toMatchObject({ end: 'completed' });
    expect(run.transport.chunkWindow).toBe(1);
    expect(run.most()).toBe(1);
    expect(run.posted().map((chunk) => chunk.output)).toEqual(Array.from({ length: COUNT }, (_, n) => ({ n })));
  });

  it('posts one at a time with chunkMetrics off (no index to order by), even when advertised', async () => {
    const run = await runOne({ advertise: true, holdUntil: 0, chunkMetrics: false });
    expect(await within(run.outcome, 'the run to end', 20_000)).toMatchObject({ end: 'completed' });
    expect(run.transport.chunkWindow).toBe(1);
    expect(run.most()).toBe(1);
    expect(run.posted().map((chunk) => chunk.output)).toEqual(Array.from({ length: COUNT }, (_, n) => ({ n })));
  });
});
