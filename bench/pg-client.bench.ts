/**
 * Which PostgreSQL client for the harness's job store: `pg` (node-postgres) or
 * `postgres` (porsager). Runs on its own, not part of `npm run bench`:
 *
 *   npx tsx bench/pg-client.bench.ts [--jobs 2000] [--runs 5]
 *
 * Starts an embedded PostgreSQL server (test/postgres/embedded-server.ts, fsync off, so
 * the figures show the client's cost, not the disk's), creates the store's hot-path table
 * and measures, per client, the store's three hot statements: submit (INSERT), take (the
 * queue's `FOR UPDATE SKIP LOCKED` claim of one job) and complete (UPDATE guarded by
 * status and attempt). Sequential: one statement at a time (latency p50); concurrent:
 * 32 callers over a pool of 10 connections (statements/s). Prints the median of `--runs`.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import postgres from 'postgres';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '2000' }, runs: { type: 'string', default: '5' } } });
const JOBS = Number(values.jobs);
const RUNS = Number(values.runs);
const CONCURRENCY = 32;
const POOL = 10;

const SCHEMA = `
  DROP TABLE IF EXISTS bench_jobs;
  CREATE TABLE bench_jobs (id text PRIMARY KEY, endpoint_id text NOT NULL, queue_seq bigserial, status text NOT NULL,
    request jsonb NOT NULL, attempt int NOT NULL DEFAULT 0, worker_id text, output jsonb, started_at bigint, ended_at bigint);
  CREATE INDEX bench_jobs_queue ON bench_jobs (endpoint_id, queue_seq) WHERE status = 'IN_QUEUE';`;
const SUBMIT = `INSERT INTO bench_jobs (id, endpoint_id, status, request) VALUES ($1, 'ep', 'IN_QUEUE', $2)`;
const TAKE = `WITH picked AS (SELECT id FROM bench_jobs WHERE endpoint_id = 'ep' AND status = 'IN_QUEUE' ORDER BY queue_seq LIMIT 1 FOR UPDATE SKIP LOCKED)
  UPDATE bench_jobs j SET status = 'IN_PROGRESS', attempt = j.attempt + 1, worker_id = $1, started_at = $2 FROM picked WHERE j.id = picked.id RETURNING j.id, j.attempt, j.request`;
const COMPLETE = `UPDATE bench_jobs SET status = 'COMPLETED', output = $1, ended_at = $2 WHERE id = $3 AND status = 'IN_PROGRESS' AND attempt = $4`;

/** The three statements through one client. */
interface Client {
  readonly name: string;
  submit(id: string, request: unknown): Promise<void>;
  take(workerId: string): Promise<{ id: string; attempt: number } | undefined>;
  complete(id: string, attempt: number, output: unknown): Promise<void>;
  reset(): Promise<void>;
  end(): Promise<void>;
}

function pgClient(url: string): Client {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  return {
    name: 'pg 8',
    // Named queries: prepared once per connection, as the store does.
    submit: async (id, request) => void (await pool.query({ name: 'submit', text: SUBMIT, values: [id, JSON.stringify(request)] })),
    take: async (workerId) => (await pool.query<{ id: string; attempt: number }>({ name: 'take', text: TAKE, values: [workerId, Date.now()] })).rows[0],
    complete: async (id, attempt, output) =>
      void (await pool.query({ name: 'complete', text: COMPLETE, values: [JSON.stringify(output), Date.now(), id, attempt] })),
    reset: async () => void (await pool.query(SCHEMA)),
    end: () => pool.end(),
  };
}

function postgresClient(url: string): Client {
  const sql = postgres(url, { max: POOL, onnotice: () => undefined });
  return {
    name: 'postgres 3',
    // prepare: true, as its tagged templates do by default.
    submit: async (id, request) => void (await sql.unsafe(SUBMIT, [id, JSON.stringify(request)], { prepare: true })),
    take: async (workerId) => (await sql.unsafe<{ id: string; attempt: number }[]>(TAKE, [workerId, Date.now()], { prepare: true }))[0],
    complete: async (id, attempt, output) => void (await sql.unsafe(COMPLETE, [JSON.stringify(output), Date.now(), id, attempt], { prepare: true })),
    reset: async () => void (await sql.unsafe(SCHEMA).simple()),
    end: () => sql.end(),
  };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface RunFigures {
  submitP50: number;
  takeP50: number;
  completeP50: number;
  concurrentPerS: number;
}

async function oneRun(client: Client, run: number): Promise<RunFigures> {
  await client.reset();
  const lat = { submit: [] as number[], take: [] as number[], complete: [] as number[] };
  const request = { input: { prompt: 'hello', n: 1 } };
  for (let i = 0; i < JOBS; i++) {
    const t = performance.now();
    await client.submit(`s${run}-${i}`, request);
    lat.submit.push(performance.now() - t);
  }
  for (let i = 0; i < JOBS; i++) {
    let t = performance.now();
    const job = await client.take('w1');
    lat.take.push(performance.now() - t);
    if (!job) throw new Error('queue ran dry');
    t = performance.now();
    await client.complete(job.id, job.attempt, { ok: true });
    lat.complete.push(performance.now() - t);
  }
  // Concurrent: each caller submits, takes and completes until JOBS jobs ended.
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, caller) => {
      while (next < JOBS) {
        next++;
        await client.submit(`c${run}-${caller}-${next}`, request);
        const job = await client.take(`w${caller}`);
        if (job) await client.complete(job.id, job.attempt, { ok: true });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { submitP50: median(lat.submit), takeP50: median(lat.take), completeP50: median(lat.complete), concurrentPerS: (JOBS * 3) / seconds };
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const server = await startEmbeddedServer();
  console.log(
    `embedded PostgreSQL started in ${server.startMs} ms; ${JOBS} jobs a run, ${RUNS} runs; ${machine.cpuModel} x${machine.nproc}, node ${machine.node}`,
  );
  try {
    for (const make of [pgClient, postgresClient]) {
      const client = make(server.url);
      const runs: RunFigures[] = [];
      await oneRun(client, -1); // warm-up
      for (let run = 0; run < RUNS; run++) runs.push(await oneRun(client, run));
      await client.end();
      const pick = (key: keyof RunFigures): string => median(runs.map((r) => r[key])).toFixed(key === 'concurrentPerS' ? 0 : 3);
      console.log(
        `${client.name.padEnd(11)} submit p50 ${pick('submitP50')} ms | take p50 ${pick('takeP50')} ms | complete p50 ${pick('completeP50')} ms | ` +
          `concurrent (${CONCURRENCY} callers, pool ${POOL}) ${pick('concurrentPerS')} statements/s | load ${loadAverage()}`,
      );
    }
  } finally {
    await server.stop();
  }
}

await main();
