/**
 * Transactions a job with one harness and with two (issue 47, item 5): `npx tsx
 * bench/store-harnesses.bench.ts [--jobs 3000] [--rounds 2] [--notice-window MS]`. One embedded PostgreSQL (fsync on);
 * each round, for each case, a fresh database: the harness store of queue-peers (bench/lib/queue-peers.ts:
 * the harness facade, one worker of 16 takers) drains `--jobs` queued jobs, alone or with a second
 * harness's store listening on the same database (which runs nothing: it only hears the first one's
 * notifications). Prints jobs/s and pg_stat_database's transactions and pg_stat_statements' statements
 * a job over the open, the queueing, the drain and the close (each session's counts reach
 * pg_stat_database when it ends), and the ratio of two harnesses to one.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { PEER_TIMES } from '../packages/platform/src/harness/store/postgres/peers.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { counts, PG_STAT_STATEMENTS_SETTINGS, sessionsGone } from './lib/pg-counts.js';
import { openQueue } from './lib/queue-peers.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '2' }, 'notice-window': { type: 'string' } },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
/** Both stores' window for their notices, ms (`--notice-window`; 0: every hot statement notifies, as before issue 47's second round). */
const NOTICE_WINDOW_MS = values['notice-window'] === undefined ? undefined : Number(values['notice-window']);
const PEERS = NOTICE_WINDOW_MS === undefined ? undefined : { ...PEER_TIMES, noticeWindowMs: NOTICE_WINDOW_MS };

const server = await startEmbeddedServer({ durable: true, settings: PG_STAT_STATEMENTS_SETTINGS });
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
let databases = 0;

/** One drain on a fresh database, with `peers` other harnesses listening; its figures. */
async function drain(peers: number): Promise<{ jobsPerS: number; transactions: number; statements: number }> {
  const database = `harnesses_${databases++}`;
  await admin.unsafe(`CREATE DATABASE ${database}`);
  const url = new URL(server.url);
  url.pathname = `/${database}`;
  try {
    // Migrated and closed first: the counts leave the schema out.
    await (await openQueue('harness store', url.toString(), 'docs', { noticeWindowMs: NOTICE_WINDOW_MS })).close();
    await sessionsGone(admin, database);
    const before = await counts(admin, database);
    const listeners: Array<{ close(): Promise<void> }> = [];
    for (let n = 0; n < peers; n++) {
      const handle = await openHarnessDatabase(url.toString(), { poolSize: 2 });
      const store = await PostgresJobStore.open(handle, { peerTimes: PEERS });
      listeners.push({ close: async () => (await store.close(), await handle.close()) });
    }
    const queue = await openQueue('harness store', url.toString(), 'docs', { noticeWindowMs: NOTICE_WINDOW_MS });
    // The peers hear each other's hello within a round trip; a statement sent before that notifies nobody.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Each job's end from the drain's start (its queueing done).
    const ends = await queue.drain(JOBS, () => undefined);
    const seconds = Math.max(...ends) / 1_000;
    await queue.close();
    for (const listener of listeners) await listener.close();
    await sessionsGone(admin, database);
    const after = await counts(admin, database);
    return {
      jobsPerS: JOBS / seconds,
      transactions: (after.transactions - before.transactions) / JOBS,
      statements: (after.statements - before.statements) / JOBS,
    };
  } finally {
    await admin.unsafe(`DROP DATABASE ${database} WITH (FORCE)`);
  }
}

try {
  await admin`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  const machine = machineInfo();
  console.log(
    `${JOBS} jobs drained by 16 takers, fsync on, notice window ${NOTICE_WINDOW_MS ?? 'default'}; ${machine.cpuModel} x${machine.nproc}, node ${machine.node}, ${machine.date}`,
  );
  await drain(0); // warm-up: V8 compiles the store's path
  for (let round = 1; round <= ROUNDS; round++) {
    // The order alternates from round to round.
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    const figures = new Map<number, Awaited<ReturnType<typeof drain>>>();
    for (const peers of order) figures.set(peers, await drain(peers));
    for (const peers of [0, 1]) {
      const f = figures.get(peers);
      if (!f) continue;
      console.log(
        `round ${round}, ${peers + 1} harness${peers > 0 ? 'es' : ''}: ${f.jobsPerS.toFixed(0)} jobs/s, ${f.transactions.toFixed(3)} transactions/job, ` +
          `${f.statements.toFixed(3)} statements/job | load ${loadAverage()}`,
      );
    }
    const one = figures.get(0);
    const two = figures.get(1);
    if (one && two) console.log(`round ${round}: transactions a job, two harnesses / one: ${(two.transactions / one.transactions).toFixed(2)}x`);
  }
} finally {
  await admin.end();
  await server.stop();
}
