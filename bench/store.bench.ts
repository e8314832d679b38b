/**
 * Jobs through the harness on each job store, issue 16. Runs on its own, not part of
 * `npm run bench`:
 *
 *   npx tsx bench/store.bench.ts [--jobs 400] [--clients 16] [--runs 3] [--fsync-off] [--pg-pool-size N]
 *
 * In one run, on one machine: the in-memory store (1 harness process), and PostgreSQL
 * (an embedded 18.4 server, fsync on unless --fsync-off) with 1 and with 2 harness
 * processes on one database. Each harness is `serverless-worker harness --store …
 * --no-rate-limit` in a process of its own; two worker processes (bench/children/
 * platform-worker.ts, concurrency 8) are spread over the harnesses; `--clients`
 * closed-loop clients call /runsync, spread over the harnesses too. Figures: jobs/s
 * over the batch and the p50 of one /runsync, the median of `--runs` after a warm-up;
 * on PostgreSQL the transactions a job cost; and the CPU time a job cost, over the
 * measured runs, of the harness processes and of the PostgreSQL server (every process
 * below this one but the harnesses and workers: far less moved by a busy shared machine
 * than jobs/s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { childExecArgv, REPO_ROOT } from './lib/child.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { processTree, readProc } from './lib/proc.js';
import { median, percentile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '400' },
    clients: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
    'fsync-off': { type: 'boolean', default: false },
    'pg-pool-size': { type: 'string' },
  },
});
const JOBS = Number(values.jobs);
const CLIENTS = Number(values.clients);
const RUNS = Number(values.runs);

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function start(script: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...childExecArgv(script), script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // A profiled child (BENCH_CPU_PROF) writes its profile only when it exits on its own.
  child.kill(process.env.BENCH_CPU_PROF ? 'SIGTERM' : 'SIGKILL');
  await exited;
}

/** A harness process; resolves with its URL and the worker variables it printed. */
async function startHarness(store: string): Promise<{ child: ChildProcess; url: string; env: Record<string, string> }> {
  const child = start(
    `${REPO_ROOT}src/cli/main.ts`,
    [
      'harness',
      '--store',
      store,
      '--port',
      '0',
      '--no-rate-limit',
      ...(store.startsWith('postgres') && values['pg-pool-size'] !== undefined ? ['--pg-pool-size', values['pg-pool-size']] : []),
    ],
    { LOG_LEVEL: 'warn' },
  );
  let banner = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (data: Buffer) => {
      banner += data.toString('utf8');
      if (banner.includes('RUNPOD_WEBHOOK_PING')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`harness exited (${String(code)})`)));
  });
  const url = /harness listening on (http:\/\/[\d.:]+)/.exec(banner)?.[1];
  if (!url) throw new Error(`no URL in the banner: ${banner}`);
  const env = Object.fromEntries(
    [...banner.matchAll(/export (RUNPOD_\w+)='([^']*)'/g)].map((m) => [m[1] as string, (m[2] as string).replaceAll('/v2/local/', '/v2/bench/')]),
  );
  return { child, url, env };
}

interface Figures {
  jobsPerS: number;
  p50Ms: number;
  p95Ms: number;
}

async function batch(pools: Pool[], jobs: number): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (next < jobs) {
        const n = next++;
        const pool = pools[(client + n) % pools.length] as Pool;
        const t = performance.now();
        const answer = await pool.request({
          method: 'POST',
          path: '/v2/bench/runsync',
          body: JSON.stringify({ input: {} }),
          headers: { 'content-type': 'application/json' },
        });
        const body = (await answer.body.json()) as { status?: string };
        if (body.status !== 'COMPLETED') throw new Error(`runsync answered ${answer.statusCode} ${JSON.stringify(body)}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  return { jobsPerS: jobs / seconds, p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95) };
}

/** Transactions committed in `database` so far (pg_stat_database; every statement outside a transaction is one). */
async function commits(database: string | undefined): Promise<number | undefined> {
  if (database === undefined) return undefined;
  const sql = (await import('postgres')).default(server.url, { max: 1, onnotice: () => undefined });
  try {
    // The statistics of other sessions reach the view when they report (at most once a second, or at their idle): force a fresh snapshot.
    await sql`SELECT pg_stat_clear_snapshot()`;
    const rows = await sql<{ n: string }[]>`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = ${database}`;
    return Number(rows[0]?.n ?? 0);
  } finally {
    await sql.end();
  }
}

/** CPU time so far of `pids`, ms (every thread; processes gone count nothing). */
function cpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (readProc(pid)?.cpuMs ?? 0), 0);
}

async function measure(name: string, stores: string[], database?: string): Promise<void> {
  const harnesses = await Promise.all(stores.map(startHarness));
  const workers = [0, 1].map((i) => {
    const harness = harnesses[i % harnesses.length] as (typeof harnesses)[number];
    return start(`${REPO_ROOT}bench/children/platform-worker.ts`, [], {
      ...harness.env,
      RUNPOD_POD_ID: `bench-worker-${i}`,
      BENCH_CONCURRENCY: '8',
      LOG_LEVEL: 'warn',
    });
  });
  const pools = harnesses.map((harness) => new Pool(harness.url, { connections: CLIENTS, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 }));
  try {
    await batch(pools, Math.min(100, JOBS)); // warm-up: workers joined, connections open
    const runs: Figures[] = [];
    const before = await commits(database);
    const harnessPids = harnesses.map((h) => h.child.pid ?? 0);
    const mine = new Set([process.pid, ...harnessPids, ...workers.map((w) => w.pid ?? 0)]);
    const serverPids = processTree(process.pid).filter((pid) => !mine.has(pid));
    const cpuBefore = { harness: cpuMs(harnessPids), server: cpuMs(serverPids) };
    for (let run = 0; run < RUNS; run++) runs.push(await batch(pools, JOBS));
    const cpu = { harness: (cpuMs(harnessPids) - cpuBefore.harness) / (JOBS * RUNS), server: (cpuMs(serverPids) - cpuBefore.server) / (JOBS * RUNS) };
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // the sessions report their counts
    const after = await commits(database);
    const cpuText = ` | CPU/job: harness ${cpu.harness.toFixed(2)} ms${database === undefined ? '' : `, PostgreSQL ${cpu.server.toFixed(2)} ms`}`;
    const perJob = (before !== undefined && after !== undefined ? ` | ${((after - before) / (JOBS * RUNS)).toFixed(1)} transactions/job` : '') + cpuText;
    const pick = (key: keyof Figures): string => median(runs.map((r) => r[key])).toFixed(key === 'jobsPerS' ? 0 : 1);
    console.log(
      `${name.padEnd(28)} ${pick('jobsPerS').padStart(6)} jobs/s | p50 ${pick('p50Ms')} ms | p95 ${pick('p95Ms')} ms | load ${loadAverage()}${perJob}`,
    );
  } finally {
    for (const pool of pools) await pool.close();
    for (const child of [...workers, ...harnesses.map((h) => h.child)]) await stop(child);
  }
}

const machine = machineInfo();
const server = await startEmbeddedServer({ durable: !values['fsync-off'] });
console.log(
  `${JOBS} /runsync jobs a run, ${CLIENTS} clients, ${RUNS} runs (median); 2 worker processes x concurrency 8; PostgreSQL fsync ${values['fsync-off'] ? 'off' : 'on'}; ` +
    `${machine.cpuModel} x${machine.nproc}, node ${machine.node}, load ${machine.loadavg}`,
);
const database = (name: string): string => {
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
};
try {
  const admin = (await import('postgres')).default(server.url, { max: 1, onnotice: () => undefined });
  for (const name of ['bench_one', 'bench_two']) await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  await measure('memory, 1 harness', ['memory']);
  await measure('postgres, 1 harness', [database('bench_one')], 'bench_one');
  await measure('postgres, 2 harnesses', [database('bench_two'), database('bench_two')], 'bench_two');
} finally {
  await server.stop();
}
