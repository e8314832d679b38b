/**
 * sw_jobs's statistics kept fresh by the store (issue 47, item 3; store/postgres/fresh-statistics.ts):
 * PostgreSQL keeps a statement's generic plan until the table's statistics change, so a plan made
 * while the table was small read the whole table as it grew. Autovacuum is off on the table here,
 * so that only the store's own ANALYZE counts: at open (a database just migrated has none), as the
 * table grows (pg_class's counts follow its size within the growth ratio), and after the
 * maintenance round rebuilt an index of the table (its plans are made again on the emptied table).
 */
import { afterEach, expect, it } from 'vitest';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { STATISTICS_LIMITS } from '../../../packages/platform/src/harness/store/postgres/fresh-statistics.js';
import { rebuildBloatedIndexes } from '../../../packages/platform/src/harness/store/postgres/index-rebuild.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { waitFor } from '../../kit/poll.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { request } from './job-store-conformance.js';

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

const T0 = 1_000_000;
const JOBS = 3_000;

interface Counted {
  /** The table's pages now. */
  readonly pages: number;
  /** What its statistics count (pg_class): -1 rows when never analyzed. */
  readonly countedPages: number;
  readonly countedRows: number;
  /** Manual ANALYZEs of the table (the store's; autovacuum's are counted apart). */
  readonly analyzed: number;
}

async function counted(handle: PostgresDatabase): Promise<Counted> {
  const [row] = await handle.sql<{ pages: string; relpages: number; reltuples: number; analyzed: string }[]>`
    SELECT pg_relation_size(c.oid) / current_setting('block_size')::int AS pages, c.relpages, c.reltuples,
      (SELECT analyze_count FROM pg_stat_user_tables WHERE relid = c.oid) AS analyzed
    FROM pg_class c WHERE c.oid = 'sw_jobs'::regclass`;
  return { pages: Number(row?.pages), countedPages: Number(row?.relpages), countedRows: Number(row?.reltuples), analyzed: Number(row?.analyzed) };
}

it('analyzes sw_jobs at open, as it grows past the ratio, and after an index rebuild', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(4);
  await handle.sql`ALTER TABLE sw_jobs SET (autovacuum_enabled = false)`;
  expect((await counted(handle)).countedRows).toBe(-1);
  const store = await PostgresJobStore.open(handle);
  try {
    // Opened on a database never analyzed: analyzed before the first statement is planned.
    const opened = await counted(handle);
    expect(opened.countedRows).toBe(0);

    for (let n = 0; n < JOBS; n += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, k) => store.submit('ep', request({ input: { n: n + k } }), {}, T0)));
    }
    // Grown far past the ratio: its statistics follow it (each look analyzes when the table is past the ratio).
    const grown = await waitFor(
      async () => {
        const now = await counted(handle);
        return now.pages < STATISTICS_LIMITS.growthRatio * Math.max(now.countedPages, STATISTICS_LIMITS.minPages) && now.countedRows > 0 ? now : undefined;
      },
      `sw_jobs's statistics to count the grown table (${JSON.stringify(await counted(handle))})`,
      20_000,
    );
    expect(grown.pages).toBeGreaterThan(STATISTICS_LIMITS.growthRatio * STATISTICS_LIMITS.minPages);
    expect(grown.analyzed).toBeGreaterThan(opened.analyzed);

    // Emptied by the cleanup, and an index rebuilt: the table is analyzed at once, its counts those of the empty table.
    const taken = [];
    for (let n = 0; n < JOBS; n += 500) taken.push(...(await store.take('ep', 'w1', 500, T0 + 1)));
    await Promise.all(taken.map((job) => store.complete('ep', job.id, 'w1', { kind: 'output', output: 1 }, job.attempt, T0 + 2)));
    expect((await store.applyDue(T0 + 24 * 3_600_000)).deleted).toHaveLength(JOBS);
    const beforeRebuild = await counted(handle);
    const rebuilt = await rebuildBloatedIndexes(
      handle.sql,
      // Every index of a table with no live rows is past this bound.
      { reindexMinBytes: 8 << 10, reindexRatio: 1, reindexBytesPerRow: 1 },
      () => undefined,
      (error) => {
        throw error;
      },
    );
    expect(rebuilt).toContain('sw_jobs_pkey');
    const afterRebuild = await counted(handle);
    expect(afterRebuild.analyzed).toBeGreaterThan(beforeRebuild.analyzed);
    expect(afterRebuild.countedRows).toBe(0);
  } finally {
    await store.close();
  }
});
