/**
 * Draining a backlog on each job store (issue 33, item 2). Runs on its own:
 *
 *   npx tsx bench/store-drain.bench.ts [--via http|facade] [--jobs 3000] [--concurrency 16] [--rounds 3] [--fsync-off] [--only memory|postgres]
 *     [--warmup 0] [--profile <file.cpuprofile>]
 *
 * `--jobs` queued no-op jobs are drained by one worker of `--concurrency`, on the
 * in-memory store and on PostgreSQL (an embedded server, fsync on unless --fsync-off; a
 * fresh database each round), in alternating rounds (which store goes first alternates too).
 *
 * - `--via http` (the default): as a real worker takes them. The harness's HTTP server
 *   runs in this process; the worker is bench/children/platform-worker.ts in a process
 *   of its own (the SDK's `serve()`, the platform transport: job-take-batch for its free
 *   slots, a job-done post per job). The rate runs from the first job's end to the last
 *   one's (the worker's start-up is not counted). `--warmup N` queues N jobs more, drained
 *   first and left out of the figures (the harness's code optimized by then: the first
 *   thousand jobs of a fresh process pay for V8's compiler, on its threads and the main one);
 *   `--profile <file>` writes a CPU profile of the harness's main thread over the measured
 *   jobs only (node:inspector, the last round's).
 * - `--via facade`: in process, `--concurrency` takers of one worker id, each taking one
 *   job through the harness's facade, completing it and taking the next.
 *
 * Figures: jobs/s of the drain (median of the rounds), and per store the takes the
 * harness asked of the store, the empty ones and the jobs a take got; on PostgreSQL the
 * statements and transactions a job, submissions and notifications included (PostgreSQL's
 * own counts, bench/lib/pg-counts.ts: no proxy sits in this process, whose CPU and event loop
 * are the harness's).
 */
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { Harness, MemoryJobStore } from '../src/harness/index.js';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import type { JobStore } from '../src/harness/store/job-store.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createHarnessServer } from '../packages/platform/src/index.js';
import { workerEnvFor } from '../packages/platform/src/harness/worker-api/worker-env.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { childExecArgv, REPO_ROOT, track } from './lib/child.js';
import { loadAverage } from './lib/machine.js';
import { counts, PG_STAT_STATEMENTS_SETTINGS, sessionsGone } from './lib/pg-counts.js';
import { mainThreadCpuMs, ownCpuMs, processTree, readProc } from './lib/proc.js';
import { median, percentile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    via: { type: 'string', default: 'http' },
    jobs: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    'fsync-off': { type: 'boolean', default: false },
    /** One store only (a profile of its drain): memory or postgres. */
    only: { type: 'string' },
    /** Print PostgreSQL's top statements of each drain by time (pg_stat_statements; a diagnosis, not a figure). */
    statements: { type: 'boolean', default: false },
    /** Jobs drained before the measured ones (over HTTP), left out of every figure. */
    warmup: { type: 'string', default: '0' },
    /** A CPU profile of the harness's main thread over the measured jobs (over HTTP; the last round's). */
    profile: { type: 'string' },
  },
});
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const VIA = values.via;
if (VIA !== 'http' && VIA !== 'facade') throw new Error(`--via must be http or facade, not ${VIA}`);

interface TakeCount {
  takes: number;
  empty: number;
  jobs: number;
}

/** The store with its takes counted (the harness asks the store; the store's own joining is below this). */
function counted(store: JobStore, count: TakeCount): JobStore {
  const take = store.take.bind(store);
  store.take = async (...args: Parameters<JobStore['take']>) => {
    const jobs = await take(...args);
    count.takes++;
    count.jobs += jobs.length;
    if (jobs.length === 0) count.empty++;
    return jobs;
  };
  return store;
}

/** Jobs a round queues: the measured ones and, over HTTP, the warm-up's before them. */
const QUEUED = VIA === 'http' ? WARMUP + JOBS : JOBS;

async function queue(harness: Harness): Promise<void> {
  const endpoint = harness.endpoint('ep');
  for (let n = 0; n < QUEUED; n += 100) await Promise.all(Array.from({ length: Math.min(100, QUEUED - n) }, () => endpoint.submit({ input: {} })));
}

interface Drained {
  readonly rate: number;
  /** CPU ms a job (in process: the harness's only; on PostgreSQL its statements' CPU is PostgreSQL's, not counted there). */
  readonly cpu?: Cpu;
}

/** Drained in process, `CONCURRENCY` takers through the facade; answers jobs/s. */
async function drainFacade(harness: Harness): Promise<Drained> {
  const endpoint = harness.endpoint('ep');
  let done = 0;
  const started = performance.now();
  const cpuStarted = ownCpuMs();
  const mainStarted = mainThreadCpuMs(process.pid) ?? Number.NaN;
  const systemStarted = process.cpuUsage().system / 1_000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (done < JOBS) {
        const [job] = await endpoint.take('w1', 1, AbortSignal.timeout(2_000));
        if (!job) continue;
        await endpoint.complete(job.id, 'w1', { kind: 'output', output: null }, job.attempt);
        done++;
      }
    }),
  );
  // The harness's CPU a job in process (the store's and the core's, no HTTP), the figure beside the HTTP drain's (issue 46 item 2).
  const cpu = {
    harness: (ownCpuMs() - cpuStarted) / JOBS,
    harnessMain: ((mainThreadCpuMs(process.pid) ?? Number.NaN) - mainStarted) / JOBS,
    harnessSystem: (process.cpuUsage().system / 1_000 - systemStarted) / JOBS,
    worker: 0,
    postgres: 0,
  };
  return { rate: JOBS / ((performance.now() - started) / 1_000), cpu };
}

/** CPU ms so far: this process (the harness), the worker process, and PostgreSQL's (every other process below this one). */
function cpuNow(workerPid: number | undefined): Cpu {
  const others = processTree(process.pid).filter((pid) => pid !== process.pid && pid !== workerPid);
  return {
    harness: ownCpuMs(),
    harnessMain: mainThreadCpuMs(process.pid) ?? Number.NaN,
    harnessSystem: process.cpuUsage().system / 1_000,
    worker: workerPid === undefined ? 0 : (readProc(workerPid)?.cpuMs ?? 0),
    postgres: others.reduce((sum, pid) => sum + (readProc(pid)?.cpuMs ?? 0), 0),
  };
}

interface Cpu {
  /** Every thread of the harness's process, user and system. */
  harness: number;
  /** Its main thread's (10 ms resolution); the rest is V8's compiler and collector threads'. */
  harnessMain: number;
  /** Its system (kernel) time, part of `harness`. */
  harnessSystem: number;
  worker: number;
  postgres: number;
}

/** Drained over HTTP by a worker process of concurrency `CONCURRENCY`; answers jobs/s from the first end to the last, and the CPU a job cost meanwhile. */
async function drainHttp(harness: Harness): Promise<Drained> {
  // BENCH_TAKE_ON_DONE=0: the worker API without the take on job-done (issue 47 item 6), for a before/after in one build.
  const server = await createHarnessServer({ harness, port: 0, rateLimits: false, workerApi: { takeOnDone: process.env.BENCH_TAKE_ON_DONE !== '0' } });
  const endpoint = harness.endpoint('ep');
  const script = `${REPO_ROOT}bench/children/platform-worker.ts`;
  const worker = track(
    spawn(process.execPath, [...childExecArgv(script), script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...workerEnvFor(server.url, 'ep'), RUNPOD_POD_ID: 'w1', BENCH_CONCURRENCY: String(CONCURRENCY), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  // The window: from the end of job `from` (counted from 1) to the end of the last; WARMUP jobs before it.
  const from = Math.max(WARMUP, 1);
  const total = WARMUP + JOBS;
  const measured = total - from;
  let first = 0;
  let last = 0;
  let ended = 0;
  let profiling: Session | undefined;
  let cpuFirst: Cpu | undefined;
  let cpuLast: Cpu | undefined;
  const allEnded = new Promise<void>((resolve) => {
    endpoint.jobEnded.add(() => {
      last = performance.now();
      if (++ended === from) {
        first = last;
        cpuFirst = cpuNow(worker.pid);
        if (values.profile) profiling = startProfile();
      }
      if (ended === total) {
        cpuLast = cpuNow(worker.pid);
        resolve();
      }
    });
  });
  try {
    const exited = new Promise<never>((_, reject) => worker.once('exit', (code) => reject(new Error(`the worker exited (${String(code)})`))));
    await Promise.race([allEnded, exited]);
    if (profiling && values.profile) await stopProfile(profiling, values.profile);
    const [a, b] = [cpuFirst as Cpu, cpuLast as Cpu];
    const per = (key: keyof Cpu): number => (b[key] - a[key]) / measured;
    const cpu = {
      harness: per('harness'),
      harnessMain: per('harnessMain'),
      harnessSystem: per('harnessSystem'),
      worker: per('worker'),
      postgres: per('postgres'),
    };
    return { rate: measured / ((last - first) / 1_000), cpu };
  } finally {
    const gone = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await gone;
    await server.close();
  }
}

/** Starts V8's sampling profiler on this (the harness's) thread; the connect and start are synchronous enough for a window's start. */
function startProfile(): Session {
  const session = new Session();
  session.connect();
  void session.post('Profiler.enable').then(() => session.post('Profiler.start'));
  return session;
}

async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

/** How long the harness held each worker API request (arrival to answer), ms, by kind: what of a worker's cycle is the harness's. */
const heldBy = { memory: { take: [] as number[], done: [] as number[] }, postgres: { take: [] as number[], done: [] as number[] } };
let held = heldBy.memory;
const arrivals = new WeakMap<IncomingMessage, number>();
subscribe('http.server.request.start', (message) => arrivals.set((message as { request: IncomingMessage }).request, performance.now()));
subscribe('http.server.response.finish', (message) => {
  const { request } = message as { request: IncomingMessage; response: ServerResponse };
  const at = arrivals.get(request);
  if (at === undefined) return;
  const kind = request.url?.includes('/job-take') ? held.take : request.url?.includes('/job-done') ? held.done : undefined;
  kind?.push(performance.now() - at);
});
const heldText = (of: typeof held): string => {
  const text = (name: string, list: number[]): string =>
    `${name} ${percentile(list, 50).toFixed(1)}/${percentile(list, 90).toFixed(1)} ms (${(list.length / ROUNDS).toFixed(0)} a round)`;
  return VIA === 'http' ? ` | held p50/p90: ${text('job-take', of.take)}, ${text('job-done', of.done)}` : '';
};

/** Queue JOBS jobs, then drain them. */
async function drain(store: JobStore): Promise<Drained> {
  const harness = new Harness({ store });
  try {
    await queue(harness);
    return VIA === 'http' ? await drainHttp(harness) : await drainFacade(harness);
  } finally {
    await harness.close();
  }
}

const server = await startEmbeddedServer({ durable: !values['fsync-off'], settings: PG_STAT_STATEMENTS_SETTINGS });
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
await admin`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;

/** The drain's top statements in `database` by execution time (--statements). */
async function printStatements(database: string): Promise<void> {
  const rows = await admin<{ calls: string; total: number; mean: number; rows: string; query: string }[]>`
    SELECT calls::text, total_exec_time AS total, mean_exec_time AS mean, rows::text, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) AS query
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${database} ORDER BY total_exec_time DESC LIMIT 8`;
  for (const row of rows)
    console.log(
      `  ${row.calls.padStart(6)} calls ${row.total.toFixed(0).padStart(6)} ms (${row.mean.toFixed(3)} a call) ${row.rows.padStart(6)} rows | ${row.query}`,
    );
}
const memory: number[] = [];
const pg: number[] = [];
const cpus: { memory: Cpu[]; postgres: Cpu[] } = { memory: [], postgres: [] };
const record = (rates: number[], cpuList: Cpu[], drained: Drained): void => {
  rates.push(drained.rate);
  if (drained.cpu) cpuList.push(drained.cpu);
};
const cpuText = (list: Cpu[]): string =>
  list.length === 0
    ? ''
    : ` | CPU a job (median): harness ${median(list.map((c) => c.harness)).toFixed(2)} ms (main thread ${median(list.map((c) => c.harnessMain)).toFixed(2)}, system ${median(list.map((c) => c.harnessSystem)).toFixed(2)}), worker ${median(list.map((c) => c.worker)).toFixed(2)} ms, PostgreSQL ${median(list.map((c) => c.postgres)).toFixed(2)} ms`;
const perJob: { statements: number[]; transactions: number[] } = { statements: [], transactions: [] };
const takes = { memory: { takes: 0, empty: 0, jobs: 0 }, postgres: { takes: 0, empty: 0, jobs: 0 } };
const describe = (count: TakeCount): string =>
  `${(count.takes / ROUNDS).toFixed(0)} store takes a round (${(count.empty / ROUNDS).toFixed(0)} empty), ${(count.jobs / Math.max(1, count.takes - count.empty)).toFixed(1)} jobs a take that got any`;
try {
  console.log(
    `${JOBS} queued jobs drained by 1 worker of concurrency ${CONCURRENCY} via ${VIA}${QUEUED > JOBS ? ` after ${WARMUP} more (not counted)` : ''}, ${ROUNDS} rounds (median); PostgreSQL fsync ${values['fsync-off'] ? 'off' : 'on'}; load ${loadAverage()}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    const runMemory = async (): Promise<void> => {
      held = heldBy.memory;
      record(memory, cpus.memory, await drain(counted(new MemoryJobStore(), takes.memory)));
    };
    const runPostgres = async (): Promise<void> => {
      const name = `drain_${round}_${Date.now()}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      // Opened once for its schema and closed; the counts are read with no session open (pg_stat_database has each one's once it ended).
      const schema = await openHarnessDatabase(url.toString(), { poolSize: 1 });
      await (await PostgresJobStore.open(schema)).close();
      await schema.close();
      await sessionsGone(admin, name);
      const before = await counts(admin, name);
      const database = await openHarnessDatabase(url.toString(), { poolSize: 10 });
      const store = await PostgresJobStore.open(database);
      held = heldBy.postgres;
      record(pg, cpus.postgres, await drain(counted(store, takes.postgres)));
      if (values.statements) await printStatements(name);
      await store.close();
      await database.close();
      await sessionsGone(admin, name);
      const after = await counts(admin, name);
      perJob.statements.push((after.statements - before.statements) / QUEUED);
      perJob.transactions.push((after.transactions - before.transactions) / QUEUED);
      await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
    };
    if (values.only === 'memory') await runMemory();
    else if (values.only === 'postgres') await runPostgres();
    else if (round % 2 === 0) {
      await runMemory();
      await runPostgres();
    } else {
      await runPostgres();
      await runMemory();
    }
    console.log(`round ${round + 1}: memory ${memory.at(-1)?.toFixed(0)} jobs/s, postgres ${pg.at(-1)?.toFixed(0)} jobs/s, load ${loadAverage()}`);
  }
  const m = median(memory);
  const p = median(pg);
  console.log(
    `memory      ${m.toFixed(0)} jobs/s (rounds: ${memory.map((v) => v.toFixed(0)).join(', ')}) | ${describe(takes.memory)}${cpuText(cpus.memory)}${heldText(heldBy.memory)}`,
  );
  console.log(
    `postgres    ${p.toFixed(0)} jobs/s (rounds: ${pg.map((v) => v.toFixed(0)).join(', ')}) | ${median(perJob.statements).toFixed(2)} statements and ${median(perJob.transactions).toFixed(2)} transactions a job (submissions, notifications included) | ${describe(takes.postgres)}${cpuText(cpus.postgres)}${heldText(heldBy.postgres)} | ${(p / m).toFixed(2)}x memory | load ${loadAverage()}`,
  );
} finally {
  await admin.end();
  await server.stop();
}
