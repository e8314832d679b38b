/**
 * @module test/reliability/faults.test
 * Faults between workers and the harness. Four workers on the real platform transport
 * reach the harness's worker API only through a fault-injecting proxy that drops,
 * delays, resets and answers 5xx on a seeded share of job-take, job-done, job-stream,
 * job-stop and ping calls, in both directions (before the harness sees a call, and
 * after it handled it, so that the answer is lost).
 *
 * "Exactly once" here means: every job reaches a final status once (one jobEnded, one
 * applied result), COMPLETED, with its right output; every stream holds each chunk
 * once, in order, with the right content. A job handed out by a job-take whose answer
 * was lost never reached a worker: it may only be recovered by the harness noticing
 * that no worker reports it (ping job_id) and putting it back in the queue, so the
 * liveness settings are scaled down (250 ms pings, 16 missed = 4 s).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isTerminal, type Job, type JobStatus, type StreamChunk } from '../../src/job/index.js';
import { waitFor } from '../kit/index.js';
import { startFaultProxy, WORKER_ROUTES, type FaultProxy } from './support/fault-proxy.js';
import { printFigures, since } from './support/figures.js';
import { TestClient, mapLimit } from './support/http.js';
import { startInProcessWorker, type InProcessWorker } from './support/platform-worker.js';
import { seededRandom } from './support/random.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';

const ENDPOINT = 'faulty';
const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_121);
const PING_MS = 250;
// 4 s: only a worker's own calls keep it alive (a held long poll does not), and on a loaded
// 2-core machine (load ~20) a 2 s window once took a live worker for gone: its jobs then ran
// out of requeues. The window is still far below the run's length, so lost hand-overs are recovered.
const MISSED_PINGS = 16;
// 500 jobs, a quarter of the 2 000 this test first ran (a benchmark's size: 190 s and a job
// out of requeues at load ~12): at these fault rates they still make some hundreds of faults,
// every kind on every route (asserted below, the figures printed), and the property is per
// job, so each further job only repeats it.
const PLAIN_JOBS = 450;
const STREAM_JOBS = 50;
const CHUNKS = 20;
const WORKERS = 4;
const CONCURRENCY = 6;
/** Bound of the whole run; it takes tens of seconds on a loaded 2-core machine. */
const RUN_BOUND_MS = 200_000;

interface Input {
  n: number;
  stream?: boolean;
}

const plainOutput = (n: number) => ({ n, square: n * n, word: `job-${n}` });
const chunkText = (n: number, i: number): string => `${n}:${i}:${'x'.repeat((n + i) % 7)}`;
const streamTexts = (n: number): string[] => Array.from({ length: CHUNKS }, (_, i) => chunkText(n, i));
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function* streamOf(n: number): AsyncGenerator<string> {
  for (let i = 0; i < CHUNKS; i++) {
    await tick();
    yield chunkText(n, i);
  }
}

// A plain function: a promise for plain jobs, an async generator for streaming ones.
const handler = (job: Job<Input>): unknown => {
  const { n, stream } = job.input;
  if (stream === true) return streamOf(n);
  return tick().then(() => plainOutput(n));
};

const client = new TestClient();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await client.close();
});

async function readStream(base: string, id: string, deadline: number): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  while (Date.now() < deadline) {
    const answer = await client.call('GET', `${base}/stream/${id}?wait=5000`);
    if (answer.status !== 200) throw new Error(`GET /stream/${id} answered ${answer.status}: ${answer.text}`);
    const { status, stream } = answer.json as { status: JobStatus; stream: StreamChunk[] };
    chunks.push(...stream);
    if (isTerminal(status)) return chunks;
  }
  throw new Error(`stream of ${id} did not end in time`);
}

async function stuckJobs(server: ReliabilityServer, ids: readonly string[], ends: ReadonlyMap<string, number>): Promise<string> {
  const endpoint = server.harness.endpoint(ENDPOINT);
  const stuck = ids.filter((id) => !ends.has(id)).slice(0, 10);
  const lines = await Promise.all(
    stuck.map(async (id) => {
      const job = await endpoint.find(id);
      return `${id} ${job?.status ?? 'gone'} worker=${job?.workerId ?? '-'} retries=${job?.retries ?? '-'}`;
    }),
  );
  return lines.join('; ');
}

describe('faults between workers and the harness', () => {
  it(
    `${PLAIN_JOBS + STREAM_JOBS} jobs end exactly once with the right output, and no chunk is lost or duplicated`,
    { timeout: RUN_BOUND_MS + 30_000 },
    async () => {
      const startedAt = performance.now();
      const server = await startReliabilityServer({
        workerApi: { longPollMs: 1_000, liveness: { pingIntervalMs: PING_MS, missedPings: MISSED_PINGS } },
      });
      cleanups.push(() => server.close());
      const proxy: FaultProxy = await startFaultProxy(server.origin, {
        seed: SEED,
        // job-stop is a long poll, called rarely: a run of 500 jobs makes 24-29 of them (the
        // printed calls), so at 0.1 about 1 run in 15 had none faulted and failed the
        // every-route check below (2 of 13 local runs). At 0.4 that is under 1 in 100 000.
        rates: { 'job-take': 0.1, 'job-done': 0.15, 'job-stream': 0.1, 'job-stop': 0.4, ping: 0.2 },
        delayMs: { min: 20, max: 300 },
        dropHoldMs: 5_000,
      });
      cleanups.push(() => proxy.close());
      const endpoint = server.harness.endpoint(ENDPOINT);
      const ends = new Map<string, number>();
      endpoint.jobEnded.add((job) => void ends.set(job.id, (ends.get(job.id) ?? 0) + 1));

      const env = server.envFor(ENDPOINT, PING_MS, proxy.origin);
      const workers: InProcessWorker[] = Array.from({ length: WORKERS }, (_, i) =>
        startInProcessWorker({ env, workerId: `faulty-worker-${i}`, handler, serve: { concurrency: CONCURRENCY, aggregateStream: true } }),
      );
      cleanups.push(() => Promise.all(workers.map((worker) => worker.stop())));

      // Plain and streaming jobs, interleaved in a seeded order.
      const random = seededRandom(SEED);
      const inputs: Input[] = [
        ...Array.from({ length: PLAIN_JOBS }, (_, n) => ({ n })),
        ...Array.from({ length: STREAM_JOBS }, (_, i) => ({ n: PLAIN_JOBS + i, stream: true })),
      ];
      for (let i = inputs.length - 1; i > 0; i--) {
        const j = random.int(0, i);
        [inputs[i], inputs[j]] = [inputs[j] as Input, inputs[i] as Input];
      }
      const base = `${server.origin}/v2/${ENDPOINT}`;
      const deadline = Date.now() + RUN_BOUND_MS;
      const reads: Array<Promise<{ id: string; n: number; chunks: StreamChunk[]; error?: string }>> = [];
      const ids = await mapLimit(inputs, 32, async (input) => {
        const answer = await client.call('POST', `${base}/run`, { body: { input } });
        expect(answer.status).toBe(200);
        const id = (answer.json as { id: string }).id;
        if (input.stream === true) {
          reads.push(
            readStream(base, id, deadline).then(
              (chunks) => ({ id, n: input.n, chunks }),
              (error: unknown) => ({ id, n: input.n, chunks: [], error: String(error) }),
            ),
          );
        }
        return id;
      });

      while (ends.size < ids.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(ends.size, `jobs not ended in time: ${await stuckJobs(server, ids, ends)}`).toBe(ids.length);
      const streams = await Promise.all(reads);
      const durationMs = since(startedAt);

      // Each job ended once, COMPLETED, with its right output.
      for (const [index, id] of ids.entries()) {
        const input = inputs[index] as Input;
        expect(ends.get(id), `job ${id} ended more than once`).toBe(1);
        const view = await endpoint.status(id);
        expect(view.status, `job ${id} (input ${JSON.stringify(input)}): ${JSON.stringify(view.error)}`).toBe('COMPLETED');
        expect(view.output).toEqual(input.stream === true ? streamTexts(input.n) : plainOutput(input.n));
      }
      // One applied result per job; every other job-done was a repeat, recognised as the same result (repeated) or acknowledged and ignored.
      const applied = server.seen.results.filter((result) => result.ack.applied && result.ack.repeated !== true);
      expect(applied.length).toBe(ids.length);
      expect(new Set(applied.map((result) => result.jobId)).size).toBe(ids.length);
      // Every stream: each chunk once, in order, with its content.
      for (const { id, n, chunks, error } of streams) {
        expect(error).toBeUndefined();
        expect(
          chunks.map((chunk) => chunk.metrics?.stream_index),
          `stream indexes of ${id}`,
        ).toEqual([...Array(CHUNKS).keys()]);
        expect(
          chunks.map((chunk) => chunk.output),
          `stream content of ${id}`,
        ).toEqual(streamTexts(n));
        expect((await endpoint.find(id))?.chunkCount).toBe(CHUNKS);
      }
      expect((await endpoint.health()).jobs).toMatchObject({ completed: ids.length, failed: 0, inProgress: 0, inQueue: 0 });
      // Every faulted route got faults of every kind.
      for (const route of WORKER_ROUTES)
        expect(
          Object.values(proxy.stats.faults[route]).reduce((a, b) => a + b, 0),
          route,
        ).toBeGreaterThan(0);
      for (const [kind, count] of Object.entries(proxy.faultsByKind())) expect(count, kind).toBeGreaterThan(0);

      const records = await Promise.all(ids.map((id) => endpoint.find(id)));
      const requeued = records.reduce((sum, record) => sum + (record?.retries ?? 0), 0);
      printFigures('faults', {
        seed: SEED,
        jobs: ids.length,
        streamJobs: STREAM_JOBS,
        chunks: STREAM_JOBS * CHUNKS,
        workers: `${WORKERS}x${CONCURRENCY}`,
        calls: proxy.stats.calls,
        faults: proxy.totalFaults(),
        byKind: proxy.faultsByKind(),
        requeuedLostJobs: requeued,
        lostHandOvers: server.seen.lost.reduce((sum, lost) => sum + lost.requeued.length, 0),
        workersDeclaredGone: server.seen.gone.length,
        repeatedResultsIgnored: server.seen.results.length - applied.length,
        postRetries: workers.reduce((sum, worker) => sum + worker.metrics.resultPostRetriesTotal.value, 0),
        postGiveUps: workers.reduce((sum, worker) => sum + worker.metrics.resultPostGiveUpsTotal.value, 0),
        heartbeatFailures: workers.reduce((sum, worker) => sum + worker.metrics.heartbeatFailuresTotal.value, 0),
        durationMs,
      });
    },
  );

  it(
    'a job-take answer lost on the way: the job goes back to the queue once the live worker leaves it out of its heartbeat, and is done once',
    { timeout: 60_000 },
    async () => {
      const server = await startReliabilityServer({
        workerApi: { longPollMs: 1_000, liveness: { pingIntervalMs: PING_MS, missedPings: MISSED_PINGS } },
      });
      cleanups.push(() => server.close());
      // Every job-take answer is lost until the test lets them through.
      const proxy = await startFaultProxy(server.origin, { seed: SEED, rates: { 'job-take': 1 }, faults: ['lose-answer'] });
      cleanups.push(() => proxy.close());
      const endpoint = server.harness.endpoint(ENDPOINT);
      const worker = startInProcessWorker({ env: server.envFor(ENDPOINT, PING_MS, proxy.origin), workerId: 'lost-answer-worker', handler });
      cleanups.push(() => worker.stop());
      const id = (await endpoint.submit({ input: { n: 7 } })).id;
      const handedOutAt = await waitFor(async () => (await endpoint.find(id))?.startedAt, 'the job to be handed out', 20_000);
      proxy.setRates({});
      const view = await endpoint.waitForEnd(id, 30_000);
      const lost = server.seen.lost.find((event) => event.requeued.includes(id));

      expect(view).toMatchObject({ status: 'COMPLETED', output: plainOutput(7), retries: 1 });
      expect(lost?.workerId).toBe('lost-answer-worker');
      // Not before the silence window: a ping sent just before the worker got a job must not requeue it.
      const requeuedAfterMs = (lost?.epochMs ?? 0) - handedOutAt;
      expect(requeuedAfterMs).toBeGreaterThanOrEqual(PING_MS * MISSED_PINGS);
      expect(server.seen.results.filter((result) => result.jobId === id && result.ack.applied && result.ack.repeated !== true)).toHaveLength(1);
      printFigures('lost-take-answer', {
        silenceWindowMs: PING_MS * MISSED_PINGS,
        requeuedAfterHandOutMs: Math.round(requeuedAfterMs),
        takeAnswersLost: proxy.totalFaults(),
      });
    },
  );

  it('a worker stopped while its chunk posts are slow still lands every chunk and then its result', { timeout: 60_000 }, async () => {
    const server = await startReliabilityServer({ workerApi: { longPollMs: 1_000, liveness: { pingIntervalMs: PING_MS, missedPings: MISSED_PINGS } } });
    cleanups.push(() => server.close());
    // Every chunk post is answered 1.5 s late: longer than the worker's abort grace (200 ms) plus its 1 s slack.
    const proxy = await startFaultProxy(server.origin, {
      seed: SEED,
      rates: { 'job-stream': 1 },
      faults: ['delay-answer'],
      delayMs: { min: 1_500, max: 1_500 },
    });
    cleanups.push(() => proxy.close());
    const endpoint = server.harness.endpoint(ENDPOINT);
    const streaming = async function* (_job: Job, ctx: { signal: AbortSignal }): AsyncGenerator<string> {
      yield 'a';
      yield 'b';
      yield 'c';
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    };
    const worker = startInProcessWorker({
      env: server.envFor(ENDPOINT, PING_MS, proxy.origin),
      workerId: 'slow-chunks-worker',
      handler: streaming,
      serve: { shutdownTimeoutMs: 100, timeoutGraceMs: 200 },
      transport: { requestTimeoutMs: 5_000, closeDrainMs: 15_000 },
    });
    const id = (await endpoint.submit({ input: {} })).id;
    // The worker runs it and its first chunk post is under way.
    await waitFor(() => (worker.runtime.running === 1 && proxy.stats.calls['job-stream'] > 0 ? true : undefined), 'the job to stream', 20_000);
    const stoppedAt = performance.now();
    const exit = await worker.stop();
    const stopMs = since(stoppedAt);

    expect(exit.exitCode).toBe(0);
    const view = await endpoint.status(id);
    expect(view.status).toBe('FAILED');
    expect(JSON.parse(view.error as string)).toMatchObject({ error_code: 'SW_WORKER_SHUTDOWN' });
    expect((await endpoint.readStream(id)).stream.map((chunk) => chunk.output)).toEqual(['a', 'b', 'c']);
    expect(worker.metrics.resultPostGiveUpsTotal.value).toBe(0);
    printFigures('stop-with-slow-chunks', { chunkAnswerDelayMs: 1_500, chunks: 3, stopMs, giveUps: worker.metrics.resultPostGiveUpsTotal.value });
  });
});
