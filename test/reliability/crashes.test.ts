/**
 * @module test/reliability/crashes.test
 * Crashes of real worker processes (serve() in platform mode, child processes through
 * tsx) against the harness server on 127.0.0.1: a worker SIGKILLed mid-job has its
 * job completed by another worker (or by itself restarted under the same pod id), and
 * a worker SIGTERMed mid-stream drains the stream, or, with a drain window shorter
 * than the stream, stops it cleanly and ends the job retryable, and /retry hands it to
 * another worker. Liveness is scaled down: pings every 200 ms, gone after 3 missed.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/job/index.js';
import { waitFor, within } from '../kit/index.js';
import { printFigures, since } from './support/figures.js';
import { TestClient } from './support/http.js';
import { QueueCaller, errorOf } from './support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';
import { killWorkers, startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

const ENDPOINT = 'crashes';
const PING_MS = 200;
/** Start-up of a tsx child on a loaded machine. */
const START_BOUND_MS = 40_000;
/**
 * The job a SIGKILL interrupts in the same-pod test: it must still run when the kill lands,
 * right after the test reads its "started" line (3 s of margin for a loaded machine), and it
 * runs again in full after the requeue: the window in which a stop recorded for the first
 * hand-over would reach the new run.
 */
const KILLED_JOB_MS = 3_000;

const client = new TestClient();
let running: ReliabilityServer | undefined;

afterEach(async () => {
  await killWorkers();
  await running?.close();
  running = undefined;
});
afterAll(() => client.close());

async function setUp(): Promise<{ server: ReliabilityServer; queue: QueueCaller; ends: Map<string, number> }> {
  const server = await startReliabilityServer({ workerApi: { longPollMs: 2_000, liveness: { pingIntervalMs: PING_MS, missedPings: 3 } } });
  running = server;
  const ends = new Map<string, number>();
  server.harness.endpoint(ENDPOINT).jobEnded.add((job) => void ends.set(job.id, (ends.get(job.id) ?? 0) + 1));
  return { server, queue: new QueueCaller(client, `${server.origin}/v2/${ENDPOINT}`), ends };
}

function startWorker(server: ReliabilityServer, workerId: string, extra: Record<string, string> = {}): WorkerProcess {
  return startWorkerProcess(workerId, { ...server.envFor(ENDPOINT, PING_MS), ...extra });
}

async function joined(server: ReliabilityServer, worker: WorkerProcess): Promise<void> {
  await waitFor(
    () => server.harness.endpoint(ENDPOINT).workers.get(worker.workerId),
    `worker ${worker.workerId} to join (stderr: ${worker.stderr().slice(-1_000)})`,
    START_BOUND_MS,
    20,
  );
}

function expectWholeStream(chunks: readonly StreamChunk[], count: number): void {
  expect(chunks.map((chunk) => chunk.metrics?.stream_index)).toEqual([...Array(count).keys()]);
  expect(chunks.map((chunk) => chunk.output)).toEqual(Array.from({ length: count }, (_, i) => `chunk-${i}`));
}

describe('a worker killed with SIGKILL mid-job', () => {
  it('has its job requeued and completed by another worker, exactly once', { timeout: 120_000 }, async () => {
    const { server, queue, ends } = await setUp();
    const victim = startWorker(server, 'crash-victim');
    await joined(server, victim);
    // Attempt 1 runs until the kill; attempt 2, the rescuer's, returns at once.
    const id = await queue.run({ input: { mode: 'sleep', msByAttempt: [60_000, 0], tag: 'survives' } });
    await victim.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the job to start');
    const killedAt = performance.now();
    victim.signal('SIGKILL');
    expect((await within(victim.exited, 'the killed worker', 10_000)).signal).toBe('SIGKILL');
    const rescuer = startWorker(server, 'crash-rescuer');
    const view = await queue.ended(id, 60_000);
    const completedAfterMs = since(killedAt);

    expect(view).toMatchObject({ status: 'COMPLETED', retries: 1, output: { jobId: id, workerId: rescuer.workerId, tag: 'survives' } });
    expect(ends.get(id)).toBe(1);
    const gone = server.seen.gone.find((event) => event.workerId === victim.workerId);
    expect(gone).toMatchObject({ requeued: [id], reason: 'silent' });
    const applied = server.seen.results.filter((result) => result.jobId === id && result.ack.applied && result.ack.repeated !== true);
    expect(applied.map((result) => result.workerId)).toEqual([rescuer.workerId]);
    printFigures('crash-sigkill', {
      silenceWindowMs: PING_MS * 3,
      requeuedAfterKillMs: Math.round((gone?.at ?? killedAt) - killedAt),
      completedAfterKillMs: completedAfterMs,
      retries: view.retries ?? 0,
      endedTimes: ends.get(id) ?? 0,
    });
  });

  it('has its job completed by the same pod restarted under its id, which is not told to stop it', { timeout: 120_000 }, async () => {
    const { server, queue, ends } = await setUp();
    const first = startWorker(server, 'crash-pod');
    await joined(server, first);
    const id = await queue.run({ input: { mode: 'sleep', ms: KILLED_JOB_MS, tag: 'same-pod' } });
    await first.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the job to start');
    first.signal('SIGKILL');
    await within(first.exited, 'the killed worker', 10_000);
    // The platform restarts a crashed pod with the same RUNPOD_POD_ID once it is declared gone.
    await waitFor(() => server.seen.gone.some((event) => event.workerId === 'crash-pod'), 'the pod to be declared gone', 20_000);
    const restarted = startWorker(server, 'crash-pod');
    const view = await queue.ended(id, 60_000);

    expect(view).toMatchObject({ status: 'COMPLETED', retries: 1, output: { jobId: id, workerId: 'crash-pod', tag: 'same-pod' } });
    expect(ends.get(id)).toBe(1);
    expect(restarted.events.filter((event) => event.event === 'started' && event.jobId === id)).toHaveLength(1);
    // A stop recorded for the first hand-over must not reach the new run.
    expect(restarted.events.filter((event) => event.event === 'aborted')).toEqual([]);
  });
});

describe('a worker SIGTERMed mid-stream', () => {
  it('drains: finishes the stream, posts the result, exits 0; no chunk lost or duplicated', { timeout: 120_000 }, async () => {
    const { server, queue, ends } = await setUp();
    const worker = startWorker(server, 'drain-worker');
    await joined(server, worker);
    const CHUNKS = 30;
    const id = await queue.run({ input: { mode: 'stream', chunks: CHUNKS, everyMs: 100 } });
    const reading = queue.stream(id, 60_000);
    await worker.waitForEvent((event) => event.event === 'chunk' && event.jobId === id && (event.index ?? 0) >= 5, 'a few chunks');
    const chunksBefore = worker.events.filter((event) => event.event === 'chunk').length;
    const termAt = performance.now();
    worker.signal('SIGTERM');
    const exit = await within(worker.exited, 'the drained worker', 40_000);
    const drainMs = since(termAt);
    const { status, chunks } = await reading;

    expect(exit.code).toBe(0);
    expect(status).toBe('COMPLETED');
    expectWholeStream(chunks, CHUNKS);
    const view = await queue.ended(id);
    expect(view.output).toEqual(Array.from({ length: CHUNKS }, (_, i) => `chunk-${i}`));
    expect(ends.get(id)).toBe(1);
    printFigures('sigterm-drain', { chunks: CHUNKS, chunksBeforeSigterm: chunksBefore, drainMs, exitCode: exit.code ?? -1 });
  });

  it(
    'with a drain window shorter than the stream: stops it cleanly, ends it retryable, and /retry hands it to another worker',
    { timeout: 120_000 },
    async () => {
      const { server, queue, ends } = await setUp();
      const worker = startWorker(server, 'short-drain', { SHUTDOWN_TIMEOUT_MS: '300' });
      await joined(server, worker);
      const CHUNKS = 40;
      const id = await queue.run({ input: { mode: 'stream', chunks: CHUNKS, everyMs: 100 } });
      const reading = queue.stream(id, 60_000);
      await worker.waitForEvent((event) => event.event === 'chunk' && event.jobId === id && (event.index ?? 0) >= 5, 'a few chunks');
      worker.signal('SIGTERM');
      const exit = await within(worker.exited, 'the stopped worker', 40_000);
      const first = await reading.catch(async (error: unknown) => {
        throw new Error(
          `${String(error)}; job: ${JSON.stringify((await server.harness.endpoint(ENDPOINT).find(id))?.status)}; worker stderr: ${worker.stderr().slice(-3_000)}; events: ${JSON.stringify(worker.events.slice(-5))}`,
        );
      });

      expect(exit.code).toBe(0);
      expect(first.status).toBe('FAILED');
      const streamed = first.chunks.length;
      expect(streamed).toBeGreaterThan(0);
      expect(streamed).toBeLessThan(CHUNKS);
      expectWholeStream(first.chunks, streamed);
      expect(errorOf(await queue.ended(id))).toMatchObject({ error_code: 'SW_WORKER_SHUTDOWN' });
      // The runtime stopped pulling the generator and closed it (its finally ran) before all chunks.
      const closed = worker.events.find((event) => event.event === 'stream-closed' && event.jobId === id);
      expect(closed?.index).toBeLessThan(CHUNKS);

      await queue.retry(id);
      const next = startWorker(server, 'takes-over');
      const second = await queue.stream(id, 60_000).catch(async (error: unknown) => {
        throw new Error(
          `${String(error)}; job: ${JSON.stringify((await server.harness.endpoint(ENDPOINT).find(id))?.status)}; worker stderr: ${next.stderr().slice(-3_000)}`,
        );
      });
      expect(second.status).toBe('COMPLETED');
      expectWholeStream(second.chunks, CHUNKS);
      expect(next.events.some((event) => event.event === 'started' && event.jobId === id)).toBe(true);
      // Ended twice in all: FAILED (shutdown), then COMPLETED after the retry.
      expect(ends.get(id)).toBe(2);
      printFigures('sigterm-short-drain', {
        drainWindowMs: 300,
        chunksBeforeStop: streamed,
        chunksAfterRetry: second.chunks.length,
        exitCode: exit.code ?? -1,
      });
    },
  );
});
