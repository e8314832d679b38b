/**
 * The harness's PostgreSQL store beside pg-boss and graphile-worker (issue 33, item 6):
 * `npm run bench -- queue-peers [--runs N] [--quick]`. An embedded PostgreSQL a case (fsync on,
 * pg_stat_statements loaded); each run is one round in which the three queues take turns
 * (their order rotates from run to run), each on a fresh database of its own, in this
 * process (bench/lib/queue-peers.ts says how each is driven, run as tsc compiles it: openCompiledQueue). The cases:
 *
 * - `wait per job`: 16 callers each submit one no-op job and wait for its end (3 000 jobs;
 *   `--quick`: 300; the warm-up run too);
 * - `drain`: 3 000 queued jobs (`--quick`: 300) drained by one consumer of concurrency 16
 *   / batches of 16, the peers set up as their docs recommend for many small jobs;
 * - `drain, peers as issue 33 set them`: the same with one pg-boss loop and graphile-worker's
 *   local queue of 16 without batched completion (the earlier figures' set-up, kept to
 *   compare; bench/lib/queue-peers.ts says which settings and why);
 * - `drain, store only, 48 results in the background`: the store alone, its worker's 16 takers
 *   allowed 48 results in the background instead of the SDK's 16, so that it holds 64 jobs at
 *   once as pg-boss's four loops of 16 do: the drain runs at about jobs held / result latency,
 *   and this case shows the store's rate when the worker is not the bound.
 *
 * For each queue: jobs/s (the drain: from its start, the jobs queued, to its last end),
 * latency p50 and p99 (wait per job: submit to end; drain: from
 * the drain's start to each job's end), statements a job (pg_stat_statements' calls in
 * its database, top-level statements but foreign-key checks: the round trips), foreign-key checks a
 * job apart (pg-boss's deferred check of each job's queue runs at the commit, where
 * pg_stat_statements counts it as a top-level statement: 1.0 of the 1.13 "statements" a job it
 * was credited with; bench/lib/pg-counts.ts), nested statements a job, transactions a job (pg_stat_database's
 * xact_commit + xact_rollback; both counts span the queue's open and close around the
 * run, a few statements over thousands of jobs; the drain's include its queueing), PostgreSQL's CPU a job (user + system time of the
 * server's processes from /proc, as the issue 33 figures were taken: bench/store.bench.ts; the drain's include its
 * queueing), and the client's CPU a job: this process's (the queue's own code, its driver, the bench's loops) over
 * the measured part (the drain from its start, without its queueing), and the part of it on threads other than
 * the event loop's (V8's optimizing compiler and garbage collector helpers).
 */
import postgres from 'postgres';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import { counts, PG_STAT_STATEMENTS_SETTINGS, sessionsGone } from './lib/pg-counts.js';
import { mainThreadCpuMs, ownCpuMs, processTree, readProc } from './lib/proc.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureCompiled } from './lib/compiled.js';
import type { openQueue, PeerSetup, QueueName, StoreSetup } from './lib/queue-peers.js';
import { type BenchCase, type Benchmark, type MetricSpec } from './lib/runner.js';
import { percentile } from './lib/stats.js';

const CLIENTS = 16;

interface Shared {
  server: EmbeddedServer | undefined;
  admin: postgres.Sql | undefined;
  databases: number;
}

const QUEUES: readonly QueueName[] = ['harness store', 'pg-boss', 'graphile-worker'];

/**
 * openQueue of bench/lib/queue-peers.ts compiled by tsc with the build's options (bench/lib/compiled.ts), so that the
 * store runs as users run the package (tsc's output), as pg-boss and graphile-worker run as they ship. Under tsx each
 * source is esbuild's transform with keepNames, which wraps every function made in a call in a `__name` call that
 * sets its name: our closures paid for it (2-3 % of the drain's main thread), the peers' code did not.
 */
let compiledOpenQueue: typeof openQueue | undefined;
async function openCompiledQueue(...args: Parameters<typeof openQueue>): ReturnType<typeof openQueue> {
  compiledOpenQueue ??= ((await import(pathToFileURL(join(ensureCompiled(), 'bench', 'lib', 'queue-peers.js')).href)) as { openQueue: typeof openQueue })
    .openQueue;
  return compiledOpenQueue(...args);
}

const SHORT: Readonly<Record<QueueName, string>> = { 'harness store': 'store', 'pg-boss': 'pg-boss', 'graphile-worker': 'graphile' };

function metricsOf(queues: readonly QueueName[]): Record<string, MetricSpec> {
  const metrics: Record<string, MetricSpec> = {};
  for (const queue of queues) {
    const short = SHORT[queue];
    metrics[`${short} jobs/s`] = { unit: 'jobs/s', digits: 0 };
    metrics[`${short} p50`] = { unit: 'ms' };
    metrics[`${short} p99`] = { unit: 'ms' };
    metrics[`${short} statements/job`] = { unit: '', digits: 2 };
    metrics[`${short} foreign-key checks/job`] = { unit: '', digits: 2 };
    metrics[`${short} nested statements/job`] = { unit: '', digits: 2 };
    metrics[`${short} transactions/job`] = { unit: '', digits: 2 };
    metrics[`${short} PG CPU/job`] = { unit: 'ms', digits: 2 };
    metrics[`${short} client CPU/job`] = { unit: 'ms', digits: 3 };
    metrics[`${short} client CPU/job off the event loop`] = { unit: 'ms', digits: 3 };
  }
  return metrics;
}

/** CPU time so far of this process's children (the PostgreSQL server's processes), ms. */
function serverCpuMs(): number {
  return processTree(process.pid)
    .filter((pid) => pid !== process.pid)
    .reduce((sum, pid) => sum + (readProc(pid)?.cpuMs ?? 0), 0);
}

/** This process's CPU so far, ms: all of it, and its event loop's thread's. */
function clientCpu(): { all: number; main: number } {
  return { all: ownCpuMs(), main: mainThreadCpuMs(process.pid) ?? Number.NaN };
}

function queueCase(
  name: string,
  shared: Shared,
  run: (queue: Awaited<ReturnType<typeof openQueue>>, jobs: number, started: () => void) => Promise<number[]>,
  setup: PeerSetup = 'docs',
  only?: { readonly queues: readonly QueueName[]; readonly store: StoreSetup },
): BenchCase {
  const queues = only?.queues ?? QUEUES;
  return {
    name,
    metrics: metricsOf(queues),
    async setup() {
      shared.server = await startEmbeddedServer({ durable: true, settings: PG_STAT_STATEMENTS_SETTINGS });
      shared.admin = postgres(shared.server.url, { max: 1, onnotice: () => undefined });
      await shared.admin`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    },
    async measure({ index, quick }) {
      const { server, admin } = shared;
      if (!server || !admin) throw new Error('not set up');
      // The warm-up run is as large as a measured one: each queue's code is compiled by V8 before it is measured (the
      // store's path takes thousands of jobs to be; after a warm-up of 100 its first measured runs were up to 1.5x slower).
      const jobs = quick ? 300 : 3_000;
      const figures: Record<string, number> = {};
      // The order rotates from round to round: none always runs first (or last) on a warm server.
      const order = queues.map((_, at) => queues[(at + index) % queues.length] as QueueName);
      for (const queueName of order) {
        const database = `peers_${shared.databases++}`;
        await admin.unsafe(`CREATE DATABASE ${database}`);
        const url = new URL(server.url);
        url.pathname = `/${database}`;
        // Opened once for its schema and closed; then the counts, then opened again for the run and closed: each session's
        // statistics reach pg_stat_database when it ends, so the counts span the second open, the run and the close.
        await (await openCompiledQueue(queueName, url.toString(), setup, only?.store)).close();
        await sessionsGone(admin, database);
        const before = await counts(admin, database);
        const queue = await openCompiledQueue(queueName, url.toString(), setup, only?.store);
        let closed = false;
        try {
          const cpuBefore = serverCpuMs();
          const began = performance.now();
          let clientBefore = clientCpu();
          const latencies = await run(queue, jobs, () => (clientBefore = clientCpu()));
          const clientAfter = clientCpu();
          // The drain's rate from its start (its queueing done) to its last job's end; a wait per job's over the whole run.
          const seconds = (name.startsWith('drain') ? Math.max(...latencies) : performance.now() - began) / 1_000;
          const cpu = serverCpuMs() - cpuBefore;
          await queue.close();
          closed = true;
          await sessionsGone(admin, database);
          const after = await counts(admin, database);
          const short = SHORT[queueName];
          figures[`${short} jobs/s`] = jobs / seconds;
          figures[`${short} p50`] = percentile(latencies, 50);
          figures[`${short} p99`] = percentile(latencies, 99);
          figures[`${short} statements/job`] = (after.statements - before.statements) / jobs;
          figures[`${short} foreign-key checks/job`] = (after.foreignKeyChecks - before.foreignKeyChecks) / jobs;
          figures[`${short} nested statements/job`] = (after.nested - before.nested) / jobs;
          figures[`${short} transactions/job`] = (after.transactions - before.transactions) / jobs;
          figures[`${short} PG CPU/job`] = cpu / jobs;
          figures[`${short} client CPU/job`] = (clientAfter.all - clientBefore.all) / jobs;
          figures[`${short} client CPU/job off the event loop`] = (clientAfter.all - clientBefore.all - (clientAfter.main - clientBefore.main)) / jobs;
        } finally {
          if (!closed) await queue.close();
          await admin.unsafe(`DROP DATABASE ${database} WITH (FORCE)`);
        }
      }
      return figures;
    },
    async teardown() {
      await shared.admin?.end();
      await shared.server?.stop();
      shared.server = undefined;
      shared.admin = undefined;
    },
  };
}

export const queuePeersBenchmark: Benchmark = {
  name: 'queue-peers',
  title: 'The harness PostgreSQL store, pg-boss and graphile-worker on one embedded PostgreSQL (fsync on), alternating: wait per job and drain',
  cases: () => {
    const fresh = (): Shared => ({ server: undefined, admin: undefined, databases: 0 });
    return [
      queueCase(`wait per job, ${CLIENTS} callers`, fresh(), (queue, jobs) => queue.waitPerJob(jobs, CLIENTS)),
      queueCase('drain', fresh(), (queue, jobs, started) => queue.drain(jobs, started)),
      queueCase('drain, peers as issue 33 set them', fresh(), (queue, jobs, started) => queue.drain(jobs, started), 'single'),
      queueCase(
        'drain, store only, 48 results in the background (64 jobs held, as pg-boss)',
        fresh(),
        (queue, jobs, started) => queue.drain(jobs, started),
        'docs',
        {
          queues: ['harness store'],
          store: { background: 48 },
        },
      ),
    ];
  },
};
