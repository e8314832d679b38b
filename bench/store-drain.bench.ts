/**
 * Draining a backlog on each job store, in process (issue 33, item 2). Runs on its own:
 *
 *   npx tsx bench/store-drain.bench.ts [--jobs 3000] [--concurrency 16] [--rounds 3] [--fsync-off]
 *
 * `--jobs` queued no-op jobs are drained by one worker of `--concurrency` (that many
 * takers of one worker id, each taking one job through the harness's facade, completing
 * it and taking the next), on the in-memory store and on PostgreSQL (an embedded server,
 * fsync on unless --fsync-off; a fresh database each round), in alternating rounds.
 * Figures: jobs/s of the drain (median of the rounds), and on PostgreSQL the statements a
 * job sent, submissions and notifications included (counted on the wire:
 * test/postgres/statement-counter.ts; a harness alone sends no notifications since
 * issue 33).
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { Harness, MemoryJobStore } from '../src/harness/index.js';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import type { JobStore } from '../src/harness/store/job-store.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { startStatementCounter } from '../test/postgres/statement-counter.js';
import { loadAverage } from './lib/machine.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    'fsync-off': { type: 'boolean', default: false },
  },
});
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);

/** Queue JOBS jobs, then drain them; answers jobs/s of the drain. */
async function drain(store: JobStore): Promise<number> {
  const harness = new Harness({ store });
  const endpoint = harness.endpoint('ep');
  try {
    for (let n = 0; n < JOBS; n += 100) await Promise.all(Array.from({ length: Math.min(100, JOBS - n) }, () => endpoint.submit({ input: {} })));
    let done = 0;
    const started = performance.now();
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
    return JOBS / ((performance.now() - started) / 1_000);
  } finally {
    await harness.close();
  }
}

const server = await startEmbeddedServer({ durable: !values['fsync-off'] });
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
const memory: number[] = [];
const pg: number[] = [];
const perJob: number[] = [];
try {
  console.log(
    `${JOBS} queued jobs drained by 1 worker of concurrency ${CONCURRENCY}, ${ROUNDS} rounds (median); PostgreSQL fsync ${values['fsync-off'] ? 'off' : 'on'}; load ${loadAverage()}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    memory.push(await drain(new MemoryJobStore()));
    const name = `drain_${round}_${Date.now()}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(server.url);
    url.pathname = `/${name}`;
    const counter = await startStatementCounter(url.toString());
    const database = await openHarnessDatabase(counter.url, { poolSize: 10 });
    const store = await PostgresJobStore.open(database);
    const before = counter.count();
    pg.push(await drain(store));
    perJob.push((counter.count() - before) / JOBS);
    await store.close();
    await database.close();
    await counter.close();
    await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
  }
  const m = median(memory);
  const p = median(pg);
  console.log(`memory      ${m.toFixed(0)} jobs/s (rounds: ${memory.map((v) => v.toFixed(0)).join(', ')})`);
  console.log(
    `postgres    ${p.toFixed(0)} jobs/s (rounds: ${pg.map((v) => v.toFixed(0)).join(', ')}) | ${median(perJob).toFixed(2)} statements/job (submissions, notifications included) | ${(p / m).toFixed(2)}x memory | load ${loadAverage()}`,
  );
} finally {
  await admin.end();
  await server.stop();
}
