/**
 * @module bench/lib/queue-peers
 * The three queues of bench/queue-peers.bench.ts, each in this process on a database of
 * its own, behind one shape: the harness's PostgreSQL store (through the harness facade,
 * as the worker API and /runsync use it), pg-boss and graphile-worker (root
 * devDependencies, latest). Two workloads each:
 *
 * - `waitPerJob`: `clients` callers each submit one no-op job and wait for its end, again
 *   and again, while one worker of concurrency `clients` runs them;
 * - `drain`: `jobs` jobs queued first, then drained by one consumer of concurrency 16
 *   (the store: 16 takers of one worker, each taking again while its result is written,
 *   as the SDK's worker does). The peers in one of two set-ups (PeerSetup):
 *   - `docs`, each as its own docs recommend for many small jobs: pg-boss as
 *     `work({ batchSize: 16, localConcurrency: 4 })` runs it (its README's and docs' way to
 *     take jobs in batches with several loops: four loops, each fetching 16 and completing
 *     the 16 together); graphile-worker with the configuration of its docs' performance page
 *     (worker.graphile.org/docs/performance: `localQueue: { size: 500 }`,
 *     `completeJobBatchDelay: 0`, `failJobBatchDelay: 0`), at this workload's concurrency 16.
 *     NOTE: with completeJobBatchDelay, graphile-worker's `job:complete` event fires when the
 *     task returns, before the batch that marks the job complete is committed: its drain
 *     ends are counted earlier than the store's and pg-boss's, which count a job once its
 *     completion is committed;
 *   - `single`, the set-up of the issue 33 figures: one pg-boss loop (fetch 16, complete
 *     16); graphile-worker at concurrency 16 with a local queue of 16, no batched completion.
 *
 * How each caller learns of its job's end: the harness's own wait (submitAndWait, in
 * process); graphile-worker's `job:complete` event (after the result is written);
 * pg-boss has no such wait, so its workers are loops of fetch and complete that resolve
 * the caller after complete() returned, woken in process by a submission (pg-boss's own
 * work() polls every 0.5 s at best: it would lose on latency alone).
 */
import { EventEmitter } from 'node:events';
import { PgBoss } from 'pg-boss';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { Harness } from '../../src/harness/index.js';
import { openHarnessDatabase } from '../../packages/platform/src/harness/harness-database.js';
import { PostgresJobStore } from '../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { PEER_TIMES } from '../../packages/platform/src/harness/store/postgres/peers.js';

export interface QueueUnderTest {
  /** Each job's latency, ms (waitPerJob: submit to end seen by the caller; drain: drain start to the job's end). */
  waitPerJob(jobs: number, clients: number): Promise<number[]>;
  /** `started`: called once the jobs are queued, as the drain begins (the bench's measures start there). */
  drain(jobs: number, started: () => void): Promise<number[]>;
  close(): Promise<void>;
}

export type QueueName = 'harness store' | 'pg-boss' | 'graphile-worker';

/** How the peers are set up for the drain (see the module comment): as their docs recommend, or as issue 33 measured them. */
export type PeerSetup = 'docs' | 'single';

/** pg-boss's loops of fetch and complete in the drain (the `localConcurrency` of its `work()`). */
const PG_BOSS_LOOPS: Readonly<Record<PeerSetup, number>> = { docs: 4, single: 1 };

const POOL = 10;

/** `clients` loops of `once` until `jobs` ran; answers each call's latency. */
async function callers(jobs: number, clients: number, once: () => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (started < jobs) {
        started++;
        const began = performance.now();
        await once();
        latencies.push(performance.now() - began);
      }
    }),
  );
  return latencies;
}

/**
 * The store's drain: results its worker writes in the background at most (the SDK's worker: as many as its takers, 16).
 * Raised, it holds as many jobs at once as pg-boss's four loops of 16 (48 + 16 = 64): what the store does when the
 * worker is not the bound (issue 47 item 2; the SDK's bound is not changed by it).
 */
export interface StoreSetup {
  readonly background?: number;
  /** The store's window for its notices to other harnesses, ms (statement-notices.ts; the store's default when left out). */
  readonly noticeWindowMs?: number;
}

export async function openQueue(name: QueueName, url: string, setup: PeerSetup = 'docs', store: StoreSetup = {}): Promise<QueueUnderTest> {
  if (name === 'harness store') return openHarnessStore(url, store.background, store.noticeWindowMs);
  if (name === 'pg-boss') return openPgBoss(url, setup);
  return openGraphile(url, setup);
}

async function openHarnessStore(url: string, maxBackground?: number, noticeWindowMs?: number): Promise<QueueUnderTest> {
  const database = await openHarnessDatabase(url, { poolSize: POOL });
  const peerTimes = noticeWindowMs === undefined ? undefined : { ...PEER_TIMES, noticeWindowMs };
  const harness = new Harness({ store: await PostgresJobStore.open(database, { peerTimes }) });
  const endpoint = harness.endpoint('ep');
  /**
   * `takers` loops of one worker, taking one job each and completing it, until `stop` is aborted (one
   * signal for every take, as the worker API's takes share their request's: no timer a take).
   * As the SDK's worker does (src/worker/posting-runs.ts): a taker takes again once its
   * handler is done while its result is written, at most `takers` results (or `maxBackground`) written that
   * way at once; past that a taker waits for its own, or for one of those to land.
   */
  const worker = async (takers: number, stop: AbortSignal, onEnd: () => void): Promise<void> => {
    let background = 0;
    const pending = new Set<Promise<void>>();
    let freed: Array<() => void> = [];
    const wakeAll = (): void => {
      const waiting = freed;
      freed = [];
      for (const wake of waiting) wake();
    };
    await Promise.all(
      Array.from({ length: takers }, async () => {
        while (!stop.aborted) {
          const [job] = await endpoint.take('w1', 1, stop);
          if (!job) continue;
          let landed = false;
          const done = endpoint.complete(job.id, 'w1', { kind: 'output', output: null }, job.attempt).then(() => {
            landed = true;
            onEnd();
          });
          while (!landed && background >= (maxBackground ?? takers)) await Promise.race([done, new Promise<void>((resolve) => freed.push(resolve))]);
          if (landed) continue;
          background++;
          pending.add(done);
          void done.then(() => {
            background--;
            pending.delete(done);
            wakeAll();
          });
        }
      }),
    );
    await Promise.all(pending);
  };
  return {
    async waitPerJob(jobs, clients) {
      const done = new AbortController();
      const running = worker(clients, done.signal, () => undefined);
      const latencies = await callers(jobs, clients, async () => {
        await endpoint.submitAndWait({ input: {} }, { sync: true }, 60_000);
      });
      done.abort();
      await running;
      return latencies;
    },
    async drain(jobs, started) {
      for (let n = 0; n < jobs; n += 100) await Promise.all(Array.from({ length: Math.min(100, jobs - n) }, () => endpoint.submit({ input: {} })));
      started();
      const began = performance.now();
      const ends: number[] = [];
      const done = new AbortController();
      await worker(16, done.signal, () => {
        ends.push(performance.now() - began);
        if (ends.length >= jobs) done.abort();
      });
      return ends;
    },
    async close() {
      await harness.close();
      await database.close();
    },
  };
}

async function openPgBoss(url: string, setup: PeerSetup): Promise<QueueUnderTest> {
  const boss = new PgBoss({ connectionString: url, max: POOL, schedule: false, supervise: false });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue('q');
  const wake = new EventEmitter();
  wake.setMaxListeners(100);
  const nextWake = (): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, 500);
      function done(): void {
        clearTimeout(timer);
        wake.off('job', done);
        resolve();
      }
      wake.once('job', done);
    });
  return {
    async waitPerJob(jobs, clients) {
      const waiting = new Map<string, () => void>();
      let stop = false;
      const workers = Array.from({ length: clients }, async () => {
        while (!stop) {
          const [job] = await boss.fetch('q', { batchSize: 1 });
          if (!job) {
            await nextWake();
            continue;
          }
          await boss.complete('q', job.id);
          waiting.get(job.id)?.();
        }
      });
      const latencies = await callers(jobs, clients, async () => {
        let resolveEnd = (): void => undefined;
        const ended = new Promise<void>((resolve) => (resolveEnd = resolve));
        const id = await boss.send('q', {});
        if (id === null) throw new Error('pg-boss did not queue the job');
        waiting.set(id, resolveEnd);
        wake.emit('job');
        await ended;
        waiting.delete(id);
      });
      stop = true;
      wake.emit('job');
      await Promise.all(workers);
      return latencies;
    },
    async drain(jobs, started) {
      for (let n = 0; n < jobs; n += 500)
        await boss.insert(
          'q',
          Array.from({ length: Math.min(500, jobs - n) }, () => ({ data: {} })),
        );
      started();
      const began = performance.now();
      const ends: number[] = [];
      // Each loop as one of work()'s: fetch a batch, run it, complete it together; an empty fetch ends the loop.
      await Promise.all(
        Array.from({ length: PG_BOSS_LOOPS[setup] }, async () => {
          while (ends.length < jobs) {
            const batch = await boss.fetch('q', { batchSize: 16 });
            if (batch.length === 0) {
              if (ends.length + 16 * PG_BOSS_LOOPS[setup] >= jobs) return;
              continue;
            }
            await boss.complete(
              'q',
              batch.map((job) => job.id),
            );
            for (let n = 0; n < batch.length; n++) ends.push(performance.now() - began);
          }
        }),
      );
      if (ends.length < jobs) throw new Error(`pg-boss drained ${ends.length} of ${jobs} jobs`);
      return ends;
    },
    async close() {
      await boss.stop({ graceful: false, close: true });
    },
  };
}

async function openGraphile(url: string, setup: PeerSetup): Promise<QueueUnderTest> {
  // A pool of this bench's: its idle connections' errors (the database dropped after the round) are this bench's to drop.
  const pgPool = new pg.Pool({ connectionString: url, max: POOL });
  pgPool.on('error', () => undefined);
  const logger = new Logger(() => () => undefined);
  const utils = await makeWorkerUtils({ pgPool, logger });
  await utils.migrate();
  /** waitPerJob: callers by job id, and the ends seen before their caller knew the id. */
  const waiting = new Map<string, () => void>();
  const endedEarly = new Set<string>();
  let onEnd: ((id: string) => void) | undefined;
  const start = async (concurrency: number, localQueueSize: number, batchedCompletion = false): Promise<Runner> => {
    const events = new EventEmitter() as WorkerEvents;
    events.on('job:complete', ({ job }) => onEnd?.(String(job.id)));
    return run({
      pgPool,
      logger,
      concurrency,
      pollInterval: 500,
      noHandleSignals: true,
      events,
      preset: {
        worker: {
          ...(localQueueSize > 1 ? { localQueue: { size: localQueueSize } } : {}),
          ...(batchedCompletion ? { completeJobBatchDelay: 0, failJobBatchDelay: 0 } : {}),
        },
      },
      taskList: { noop: () => undefined },
    });
  };
  return {
    async waitPerJob(jobs, clients) {
      onEnd = (id) => {
        const caller = waiting.get(id);
        if (caller) caller();
        else endedEarly.add(id);
      };
      const runner = await start(clients, 1);
      const latencies = await callers(jobs, clients, async () => {
        const id = String((await utils.addJob('noop', {})).id);
        if (endedEarly.delete(id)) return;
        await new Promise<void>((resolve) => waiting.set(id, resolve));
        waiting.delete(id);
      });
      await runner.stop();
      onEnd = undefined;
      return latencies;
    },
    async drain(jobs, started) {
      await utils.withPgClient((client) =>
        client.query(
          `SELECT graphile_worker.add_jobs(array(SELECT ROW('noop', '{}'::json, NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec FROM generate_series(1, $1)))`,
          [jobs],
        ),
      );
      started();
      const began = performance.now();
      const times: number[] = [];
      let resolveAll = (): void => undefined;
      const all = new Promise<void>((resolve) => (resolveAll = resolve));
      onEnd = () => {
        times.push(performance.now() - began);
        if (times.length >= jobs) resolveAll();
      };
      const runner = setup === 'docs' ? await start(16, 500, true) : await start(16, 16);
      await all;
      onEnd = undefined;
      await runner.stop();
      return times;
    },
    async close() {
      await utils.release();
      await pgPool.end();
    },
  };
}
