/**
 * The maintenance check (issue 33, item 4; store/postgres/maintenance-check.ts) on real
 * conditions made in the test, with low limits instead of waiting: a transaction held
 * open in another connection, dead rows no vacuum cleaned, indexes that kept their pages
 * after a VACUUM truncated their table. Each is warned of once, again after it cleared.
 * The rounds: of two harnesses whose rounds come due together, one checks.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import { MAINTENANCE_LIMITS, MaintenanceCheck, type MaintenanceLimits } from '../../../packages/platform/src/harness/store/postgres/maintenance-check.js';
import { ManualClock } from '../../../src/clock/manual-clock.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { waitFor } from '../../kit/index.js';

let database: TestDatabase | undefined;
const others: postgres.Sql[] = [];
afterEach(async () => {
  for (const sql of others.splice(0)) await sql.end();
  await database?.drop();
  database = undefined;
});

/** Limits none of the conditions reach unless the test makes it (each test lowers one). */
const QUIET: MaintenanceLimits = { ...MAINTENANCE_LIMITS, oldTransactionMs: 3_600_000, minDeadRows: 1e12, minIndexBytes: 1e15, reindexMinBytes: 1e15 };

async function setUp(limits: Partial<MaintenanceLimits>): Promise<{ sql: postgres.Sql; check: MaintenanceCheck; warnings: string[] }> {
  database = await createTestDatabase();
  const handle = await database.connect(2);
  const warnings: string[] = [];
  const check = new MaintenanceCheck(
    handle.sql,
    { ...QUIET, ...limits },
    (message) => warnings.push(message),
    (error) => warnings.push(String(error)),
  );
  const other = postgres(database.url, { max: 1, onnotice: () => undefined });
  others.push(other);
  return { sql: other, check, warnings };
}

/**
 * Older than this counts as held open: not 0, or a query of the check's own second
 * connection, running beside the one that looks, counts too (a CI run saw it).
 */
const HELD_MS = 1_000;

it('warns once of a transaction left open in another connection, and again after it ended and another did', async () => {
  const { sql, check, warnings } = await setUp({ oldTransactionMs: HELD_MS });
  expect(await check.check()).toEqual([]);
  const held = await sql.reserve();
  try {
    await held`BEGIN`;
    await held`SELECT txid_current()`;
    await held`SELECT 1 AS "held open by the test"`;
    const first = await waitFor(async () => (await check.check())[0], 'the transaction held open to be found', 15_000, 100);
    expect(first.key).toMatch(/^transaction:\d+$/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /a transaction open for [\d.]+ min \(pid \d+, .*idle in transaction: "SELECT 1 AS \\"held open by the test\\""\) holds back vacuum/,
    );
    // Still open: not warned again.
    expect(await check.check()).toEqual([]);
    expect(warnings).toHaveLength(1);
    await held`COMMIT`;
    expect(await check.check()).toEqual([]);
    await held`BEGIN`;
    await held`SELECT txid_current()`;
    const again = await waitFor(async () => (await check.check()).map((finding) => finding.key)[0], 'the next transaction held open to be found', 15_000, 100);
    expect(again).toBe(first.key);
    expect(warnings).toHaveLength(2);
    await held`COMMIT`;
  } finally {
    held.release();
  }
});

it('warns of dead rows no vacuum cleaned, and of indexes that outweigh their table after a VACUUM emptied it', async () => {
  const { sql, check, warnings } = await setUp({ minDeadRows: 100, deadRowsRatio: 1, vacuumQuietMs: 0 });
  await sql`INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at) SELECT 'ep', 'w' || n, 1, 1 FROM generate_series(1, 5000) n`;
  await sql`DELETE FROM sw_workers`;
  // This session's table counts reach the statistics before its next statement is answered.
  await sql`SELECT pg_stat_force_next_flush()`;
  await sql`SELECT 1`;
  const dead = await check.check();
  expect(dead.map((finding) => finding.key)).toEqual(['dead:sw_workers']);
  expect(warnings[0]).toMatch(/^PostgreSQL maintenance: sw_workers holds 5000 dead rows for 0 live ones and was last vacuumed never/);

  // VACUUM gives the table's empty pages back to the system; its primary key keeps its pages.
  await sql`VACUUM sw_workers`;
  const bloat = new MaintenanceCheck(
    sql,
    { ...QUIET, indexRatio: 2, minIndexBytes: 1 },
    (message) => warnings.push(message),
    (error) => warnings.push(String(error)),
  );
  const found = await bloat.check();
  expect(found.map((finding) => finding.key)).toContain('index:sw_workers');
  expect(warnings.at(-1)).toMatch(/the indexes of sw_\w+ weigh [\d.]+ MB for a table of [\d.]+ MB \(more than 2x\).*REINDEX TABLE CONCURRENTLY/);
  // Warned once (the keys warned of are kept in the database, for whichever harness looks next).
  expect(await bloat.check()).toEqual([]);
});

it('runs each round in one harness of those on the database: the one whose turn it takes first', async () => {
  const { sql, warnings } = await setUp({ oldTransactionMs: 0 });
  const handle = await (database as TestDatabase).connect(2);
  const clock = new ManualClock();
  const checks = [0, 1].map(
    () =>
      new MaintenanceCheck(
        handle.sql,
        { ...QUIET, oldTransactionMs: 0, intervalMs: 60_000 },
        (message) => warnings.push(message),
        (error) => warnings.push(String(error)),
        clock,
      ),
  );
  const held = await sql.reserve();
  try {
    await held`BEGIN`;
    await held`SELECT txid_current()`;
    for (const check of checks) check.start();
    clock.advance(60_000);
    await Promise.all(checks.map((check) => check.settled()));
    // Both rounds came due; one took the turn (sw_maintenance.checked_at) and warned.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/holds back vacuum/);
    const [row] = await handle.sql<{ warned: string[] }[]>`SELECT warned FROM sw_maintenance`;
    expect(row?.warned).toEqual([expect.stringMatching(/^transaction:\d+$/)]);
    // Due again on this clock, but not on the database's (the last turn was taken under 54 s ago): no round runs,
    // though a round would warn again now (what was warned of is forgotten).
    await handle.sql`UPDATE sw_maintenance SET warned = '{}'`;
    clock.advance(60_000);
    await Promise.all(checks.map((check) => check.settled()));
    expect(warnings).toHaveLength(1);
    await held`COMMIT`;
  } finally {
    held.release();
    for (const check of checks) check.close();
  }
});
