/**
 * The PostgreSQL store's hot path as jobs accumulate on a fresh database, issue 26:
 * `npx tsx bench/store-growth.bench.ts [--jobs 8000] [--step 1000]`. One loop of submit,
 * take and result, one job at a time, on a database the run creates (no statistics yet,
 * as a new harness's database: PostgreSQL caches each statement's plan while the table
 * is small); prints the mean time of each call per `--step` jobs. A statement whose cached
 * plan reads more as the table grows shows as a column that climbs.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '8000' }, step: { type: 'string', default: '1000' } } });
const JOBS = Number(values.jobs);
const STEP = Number(values.step);

const server = await startEmbeddedServer();
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
try {
  await admin`CREATE DATABASE growth`;
  const database = await openHarnessDatabase(server.url.replace(/\/postgres$/, '/growth'), { poolSize: 2 });
  const store = await PostgresJobStore.open(database);
  const machine = machineInfo();
  console.log(`${JOBS} jobs, one at a time (fsync off); ${machine.cpuModel} x${machine.nproc}, node ${machine.node}, ${machine.date}`);
  console.log('jobs so far | submit | take | result (ms, mean of the step)');
  let now = 1_000;
  for (let done = 0; done < JOBS; done += STEP) {
    const spent = [0, 0, 0];
    for (let n = 0; n < STEP; n++) {
      let began = performance.now();
      const job = await store.submit('ep', { input: { n } }, {}, now++);
      spent[0] = (spent[0] ?? 0) + performance.now() - began;
      began = performance.now();
      const [taken] = await store.take('ep', 'w1', 1, now++);
      spent[1] = (spent[1] ?? 0) + performance.now() - began;
      began = performance.now();
      await store.complete('ep', job.id, 'w1', { kind: 'output', output: n }, taken?.attempt, now++);
      spent[2] = (spent[2] ?? 0) + performance.now() - began;
    }
    console.log(`${String(done + STEP).padStart(11)} | ${spent.map((ms) => (ms / STEP).toFixed(3)).join(' | ')} | load ${loadAverage()}`);
  }
  await store.close();
  await database.close();
} finally {
  await admin.end();
  await server.stop();
}
