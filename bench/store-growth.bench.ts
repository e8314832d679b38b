/**
 * The PostgreSQL store's hot path as jobs accumulate on a fresh database, issue 26:
 * `npx tsx bench/store-growth.bench.ts [--jobs 8000] [--step 1000]`. One loop of submit,
 * take and result, one job at a time, on a database the run creates (no statistics yet,
 * as a new harness's database: PostgreSQL caches each statement's plan while the table
 * is small); prints the mean time of each call per `--step` jobs. A statement whose cached
 * plan reads more as the table grows shows as a column that climbs.
 *
 * Then the sizes (issue 33, item 6): sw_jobs and its indexes at the start (empty), at the
 * peak (every job retained), and after the cleanup (the retention sweep, applyDue past
 * every job's retention) and a VACUUM; `--passes 2` runs the jobs and the cleanup again,
 * to show whether the second pass reuses the pages the first one left (a bounded size)
 * or grows on. After each cleanup, the maintenance round's index rebuild
 * (store/postgres/index-rebuild.ts, its default bound) runs, and the sizes again.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { INDEX_REBUILD_LIMITS, rebuildBloatedIndexes } from '../packages/platform/src/harness/store/postgres/index-rebuild.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '8000' }, step: { type: 'string', default: '1000' }, passes: { type: 'string', default: '1' } },
});
const JOBS = Number(values.jobs);
const STEP = Number(values.step);
const PASSES = Number(values.passes);

/** sw_jobs's table (heap and TOAST) and its indexes, MB. */
async function sizes(sql: postgres.Sql): Promise<{ table: number; indexes: number; text: string }> {
  const [row] = await sql<{ table: string; indexes: string }[]>`SELECT pg_table_size('sw_jobs') AS table, pg_indexes_size('sw_jobs') AS indexes`;
  const table = Number(row?.table) / 1_048_576;
  const indexes = Number(row?.indexes) / 1_048_576;
  return { table, indexes, text: `table ${table.toFixed(2)} MB + indexes ${indexes.toFixed(2)} MB = ${(table + indexes).toFixed(2)} MB` };
}

const server = await startEmbeddedServer();
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
try {
  await admin`CREATE DATABASE growth`;
  const database = await openHarnessDatabase(server.url.replace(/\/postgres$/, '/growth'), { poolSize: 2 });
  const store = await PostgresJobStore.open(database);
  const machine = machineInfo();
  console.log(`${JOBS} jobs, one at a time (fsync off); ${machine.cpuModel} x${machine.nproc}, node ${machine.node}, ${machine.date}`);
  const start = await sizes(database.sql);
  console.log(`sizes at start: ${start.text}`);
  let now = 1_000;
  for (let pass = 1; pass <= PASSES; pass++) {
    console.log(`pass ${pass}: jobs so far | submit | take | result (ms, mean of the step)`);
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
    console.log(`pass ${pass}, sizes at the peak (${JOBS} jobs retained): ${(await sizes(database.sql)).text}`);
    // Past every job's retention (the default, 30 min after its end): the sweep deletes them all.
    now += 24 * 3_600_000;
    const began = performance.now();
    const { deleted } = await store.applyDue(now);
    const sweepMs = performance.now() - began;
    await database.sql`VACUUM sw_jobs`;
    const after = await sizes(database.sql);
    console.log(
      `pass ${pass}, after the cleanup (${deleted.length} deleted in ${sweepMs.toFixed(0)} ms) and VACUUM: ${after.text}; ` +
        `${((after.table + after.indexes) / (start.table + start.indexes)).toFixed(1)}x the start | load ${loadAverage()}`,
    );
    const rebuilt = await rebuildBloatedIndexes(
      database.sql,
      INDEX_REBUILD_LIMITS,
      (line) => console.log(`  ${line}`),
      (error) => console.error(error),
    );
    const rebuiltSizes = await sizes(database.sql);
    console.log(
      `pass ${pass}, after the index rebuild (${rebuilt.length} rebuilt): ${rebuiltSizes.text}; ` +
        `${((rebuiltSizes.table + rebuiltSizes.indexes) / (start.table + start.indexes)).toFixed(1)}x the start | load ${loadAverage()}`,
    );
  }
  await store.close();
  await database.close();
} finally {
  await admin.end();
  await server.stop();
}
