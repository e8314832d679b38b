/**
 * @module test/reliability/load.test
 * Load at the spec 8.2 limits against the harness server on 127.0.0.1, for a bounded
 * number of rate windows: in each window 420 concurrent /runsync (the limit is 400 in
 * flight) and 1 100 /run (the limit is 1 000 per 10 s). Every request is answered;
 * exactly the requests past a limit get 429 (SW_RATE_LIMITED, Retry-After, the reason);
 * every accepted job completes. The rate limiter and the harness run on a manual clock,
 * so that a window is exactly one window however slow the machine, and so that the
 * results' retention (30 min after /run) can be let pass at the end: the heap must then
 * come back near where it started.
 *
 * The memory bound is generous (12 MiB over the start, see HEAP_BOUND_MIB): V8 keeps
 * some of what it grew (compiled code, old-space pages, the rate log of the last
 * window), and the point is to catch what grows with the number of jobs. The heap is
 * read after two forced collections, with no connection open.
 */
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../src/harness/index.js';
import { RETENTION_MS, type JobView } from '../../src/job/index.js';
import { startLocalWorker } from '../../src/local/local-worker.js';
import { resolveOptions } from '../../src/worker/index.js';
import { waitFor } from '../kit/index.js';
import { printFigures, since } from './support/figures.js';
import { TestClient, mapLimit, type JsonAnswer } from './support/http.js';
import { startReliabilityServer } from './support/reliability-server.js';
import pino from 'pino';

const ENDPOINT = 'loaded';
const WINDOW_MS = 10_000;
const WINDOWS = 3;
const RUNSYNC_LIMIT = 400;
const RUNSYNC_SENT = 420;
const RUN_LIMIT = 1_000;
const RUN_SENT = 1_100;
/** /run requests in flight at once: under the 200 concurrent limit, so only the per-window limit applies. */
const RUN_PARALLEL = 100;
/**
 * Heap that may stay above the start once the jobs are gone, MiB. Measured: 2.7 to 4.6
 * MiB whether 1 400 or 8 400 jobs went through (compiled code, pools: it does not grow
 * with the jobs), while the 4 200 job records of these windows hold about 10 MiB; a
 * harness that kept them would pass 12.
 */
const HEAP_BOUND_MIB = 12;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  gc();
  return Math.round((process.memoryUsage().heapUsed / 1_048_576) * 10) / 10;
}

const client = new TestClient();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await client.close();
});

/** Wait (bounded) until the server holds no connection: closed keep-alive sockets are freed on its side too. */
async function settleSockets(server: Server): Promise<void> {
  const open = (): Promise<number> => new Promise((resolve) => server.getConnections((_error, count) => resolve(count)));
  for (let i = 0; i < 200 && (await open()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

interface Refusal {
  code: unknown;
  reason: unknown;
  retryAfter: unknown;
}

function refusal(answer: JsonAnswer): Refusal {
  const error = (answer.json as { error?: { code?: unknown; details?: { reason?: unknown } } } | undefined)?.error;
  return { code: error?.code, reason: error?.details?.reason, retryAfter: answer.headers['retry-after'] };
}

describe('load at the rate limits', () => {
  it(
    `${WINDOWS} windows of ${RUNSYNC_SENT} concurrent /runsync and ${RUN_SENT} /run: every request answered, 429 only past the limits, memory back afterwards`,
    { timeout: 180_000 },
    async () => {
      const startedAt = performance.now();
      const clock = new ManualClock(Date.now());
      const harness = new Harness({ clock });
      const server = await startReliabilityServer({
        harness,
        rateLimits: { windowMs: WINDOW_MS, requestsPerWorker: 0, now: () => clock.now() },
      });
      cleanups.push(() => server.close());
      const base = `${server.origin}/v2/${ENDPOINT}`;
      let gate: Promise<void> = Promise.resolve();
      const silent = pino({ level: 'silent' });
      const worker = startLocalWorker(
        async (job) => {
          const input = job.input as { gate?: boolean; n: number };
          if (input.gate === true) await gate;
          return { n: input.n, doubled: input.n * 2 };
        },
        resolveOptions({ endpointId: ENDPOINT, concurrency: 64, gpuSampling: false, logger: silent }),
        silent,
        harness,
      );
      cleanups.push(() => worker.stop());
      const endpoint = harness.endpoint(ENDPOINT);

      // Warm up (compiled code), then take the starting heap with no connection open.
      const warmUp = new TestClient();
      await mapLimit(
        Array.from({ length: 50 }, (_, n) => n),
        25,
        (n) => warmUp.call('POST', `${base}/runsync`, { body: { input: { n } } }),
      );
      await warmUp.close();
      clock.advance(RETENTION_MS.syncMax + 1);
      await settleSockets(server.server.app.server);
      const heapStart = heapMiB();

      const windows: Array<Record<string, number>> = [];
      let unanswered = 0;
      for (let w = 0; w < WINDOWS; w++) {
        const windowStart = clock.now();
        let openGate!: () => void;
        gate = new Promise<void>((resolve) => (openGate = resolve));
        let syncRefused = 0;
        const syncAnswers = Array.from({ length: RUNSYNC_SENT }, (_, i) =>
          client.call('POST', `${base}/runsync?wait=120000`, { body: { input: { gate: true, n: w * 10_000 + i } }, timeoutMs: 150_000 }).then((answer) => {
            if (answer.status === 429) syncRefused++;
            return answer;
          }),
        );
        // 400 accepted and waiting on their jobs, the other 20 refused for concurrency.
        const syncSubmitted = async (): Promise<number> => (await endpoint.jobs()).filter((job) => job.sync && job.submittedAt === windowStart).length;
        await waitFor(
          async () => syncRefused === RUNSYNC_SENT - RUNSYNC_LIMIT && (await syncSubmitted()) === RUNSYNC_LIMIT,
          'the /runsync limit to fill',
          60_000,
          20,
        );

        const runAnswers = await mapLimit(
          Array.from({ length: RUN_SENT }, (_, i) => i),
          RUN_PARALLEL,
          (i) => client.call('POST', `${base}/run`, { body: { input: { n: w * 10_000 + i } } }),
        );
        openGate();
        const settled = await Promise.allSettled(syncAnswers);
        unanswered += settled.filter((result) => result.status === 'rejected').length;
        const sync = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));

        const syncOk = sync.filter((answer) => answer.status === 200);
        const syncRefusals = sync.filter((answer) => answer.status === 429).map(refusal);
        const runOk = runAnswers.filter((answer) => answer.status === 200);
        const runRefusals = runAnswers.filter((answer) => answer.status === 429).map(refusal);
        expect(sync.length + runAnswers.length).toBe(RUNSYNC_SENT + RUN_SENT);
        expect(syncOk.length + syncRefusals.length, 'only 200 or 429 from /runsync').toBe(RUNSYNC_SENT);
        expect(runOk.length + runRefusals.length, 'only 200 or 429 from /run').toBe(RUN_SENT);
        expect(syncOk.length).toBe(RUNSYNC_LIMIT);
        expect(runOk.length).toBe(RUN_LIMIT);
        for (const answer of syncOk) expect((answer.json as JobView).status).toBe('COMPLETED');
        for (const r of syncRefusals) expect(r).toMatchObject({ code: 'SW_RATE_LIMITED', reason: 'concurrency' });
        for (const r of runRefusals) expect(r).toMatchObject({ code: 'SW_RATE_LIMITED', reason: 'rate' });
        for (const r of [...syncRefusals, ...runRefusals]) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);

        // Every accepted /run job completes.
        await waitFor(
          async () => {
            const { jobs } = await endpoint.health();
            return jobs.inQueue === 0 && jobs.inProgress === 0;
          },
          'the queue to empty',
          60_000,
          20,
        );
        const runIds = runOk.map((answer) => (answer.json as { id: string }).id);
        for (const id of runIds) expect((await endpoint.status(id)).status).toBe('COMPLETED');
        windows.push({ syncOk: syncOk.length, sync429: syncRefusals.length, runOk: runOk.length, run429: runRefusals.length });
        clock.advance(WINDOW_MS);
      }
      expect(unanswered).toBe(0);
      // The callers go away: what is left is the jobs the harness keeps for their retention.
      await client.close();
      await settleSockets(server.server.app.server);
      const heapLoaded = heapMiB();
      const jobsKept = (await endpoint.jobs()).length;

      // The results retention passes: every finished job is dropped, and the heap comes back.
      clock.advance(RETENTION_MS.async + 1);
      expect(await endpoint.jobs()).toHaveLength(0);
      const heapEnd = heapMiB();
      expect(heapEnd).toBeLessThan(heapLoaded);
      expect(heapEnd).toBeLessThan(heapStart + HEAP_BOUND_MIB);

      printFigures('load', {
        windows: WINDOWS,
        windowMs: WINDOW_MS,
        runsyncPerWindow: `${RUNSYNC_SENT} sent/${RUNSYNC_LIMIT} ok/${RUNSYNC_SENT - RUNSYNC_LIMIT} 429`,
        runPerWindow: `${RUN_SENT} sent/${RUN_LIMIT} ok/${RUN_SENT - RUN_LIMIT} 429`,
        requests: WINDOWS * (RUNSYNC_SENT + RUN_SENT),
        unanswered,
        jobsKeptBeforeRetention: jobsKept,
        heapStartMiB: heapStart,
        heapLoadedMiB: heapLoaded,
        heapAfterRetentionMiB: heapEnd,
        rssMiB: Math.round(process.memoryUsage().rss / 1_048_576),
        durationMs: since(startedAt),
      });
    },
  );
});
