/**
 * A frozen worker process (SIGSTOP: every thread stops, its sockets stay open) against
 * the harness server on 127.0.0.1: it stops pinging, so it is gone after the silence
 * window although its job-stop long poll is held open for a whole minute; its job is
 * requeued and completed by another worker, once. Thawed (SIGCONT), it learns that its
 * job was taken back (or its late result is refused as stale) and nothing changes. Real worker child processes
 * (serve() in platform mode through tsx); pings every 200 ms, gone after 3 missed.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../kit/index.js';
import { printFigures, since } from '../../../reliability/support/figures.js';
import { TestClient } from '../../../reliability/support/http.js';
import { QueueCaller } from '../../../reliability/support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from '../../../reliability/support/reliability-server.js';
import { killWorkers, startWorkerProcess, type WorkerProcess } from '../../../reliability/support/worker-process.js';

const ENDPOINT = 'frozen';
const PING_MS = 200;
const MISSED = 3;
/** Longer than every wait below: before the fix, a held poll kept a frozen worker alive until it ended. */
const LONG_POLL_MS = 120_000;
const START_BOUND_MS = 40_000;

const client = new TestClient();
let running: ReliabilityServer | undefined;

afterEach(async () => {
  await killWorkers();
  await running?.close();
  running = undefined;
});
afterAll(() => client.close());

async function joined(server: ReliabilityServer, worker: WorkerProcess): Promise<void> {
  await waitFor(
    () => server.harness.endpoint(ENDPOINT).workers.get(worker.workerId),
    `worker ${worker.workerId} to join (stderr: ${worker.stderr().slice(-1_000)})`,
    START_BOUND_MS,
    20,
  );
}

describe('a worker frozen with SIGSTOP mid-job', () => {
  it(
    'is gone after the silence window whatever polls it holds open; its job is requeued and completed by another worker, once',
    { timeout: 150_000 },
    async () => {
      const server = await startReliabilityServer({ workerApi: { longPollMs: LONG_POLL_MS, liveness: { pingIntervalMs: PING_MS, missedPings: MISSED } } });
      running = server;
      const ends = new Map<string, number>();
      server.harness.endpoint(ENDPOINT).jobEnded.add((job) => void ends.set(job.id, (ends.get(job.id) ?? 0) + 1));
      const queue = new QueueCaller(client, `${server.origin}/v2/${ENDPOINT}`);
      const env = server.envFor(ENDPOINT, PING_MS);

      // Debug logs: its late result's refusal (409 SW_STALE_ATTEMPT) is logged at debug.
      const frozen = startWorkerProcess('frozen-worker', { ...env, LOG_LEVEL: 'debug' });
      await joined(server, frozen);
      // 8 s for attempt 1 (still running when frozen); attempt 2, its rescuer's, returns at once.
      const id = await queue.run({ input: { mode: 'sleep', msByAttempt: [8_000, 0], tag: 'thawed-late' } });
      await frozen.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the job to start');
      // The worker holds a job: its job-stop poll is open (it is kept open while a job runs).
      await new Promise((resolve) => setTimeout(resolve, 3 * PING_MS));
      const stoppedAt = performance.now();
      frozen.signal('SIGSTOP');

      // Generous bound, far below the held poll (120 s): only the pings may keep it alive.
      await waitFor(() => server.seen.gone.some((gone) => gone.workerId === frozen.workerId), 'the frozen worker declared gone', 30_000, 20);
      const gone = server.seen.gone.find((event) => event.workerId === frozen.workerId);
      expect(gone).toMatchObject({ requeued: [id], reason: 'silent' });
      const requeuedAfterMs = Math.round((gone?.at ?? stoppedAt) - stoppedAt);

      const rescuer = startWorkerProcess('rescuer', env);
      const view = await queue.ended(id, 60_000);
      expect(view).toMatchObject({ status: 'COMPLETED', retries: 1, output: { jobId: id, workerId: rescuer.workerId, tag: 'thawed-late' } });
      expect(ends.get(id)).toBe(1);

      // Thawed, the first worker either reads the stop that waited for it or finishes its run and posts late: nothing changes.
      frozen.signal('SIGCONT');
      await waitFor(
        () =>
          frozen.events.some((event) => event.event === 'aborted' && event.jobId === id) ||
          frozen.stderr().includes('of a stale attempt refused by the platform'),
        `the thawed worker to stop its run or have its late result refused (stderr: ${frozen.stderr().slice(-3_000)}; events: ${JSON.stringify(frozen.events)})`,
        30_000,
        20,
      );
      expect(await queue.ended(id)).toMatchObject({ status: 'COMPLETED', output: { workerId: rescuer.workerId } });
      const applied = server.seen.results.filter((result) => result.jobId === id && result.ack.applied && result.ack.repeated !== true);
      expect(applied.map((result) => result.workerId)).toEqual([rescuer.workerId]);
      expect(ends.get(id)).toBe(1);
      printFigures('frozen-sigstop', {
        silenceWindowMs: PING_MS * MISSED,
        longPollMs: LONG_POLL_MS,
        requeuedAfterStopMs: requeuedAfterMs,
        completedAfterStopMs: since(stoppedAt),
      });
    },
  );
});
