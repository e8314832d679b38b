/**
 * Migration 0008 (issue 47, items 2 and 4): the three time rules (ttl, execution timeout, retention) read one index,
 * `sw_jobs_due` on a job's first deadline, in place of one index each. A database a version-7 harness left, with a
 * job due by each rule and by two at once, is carried on: one pass applies each rule to its own rows (the ttl before
 * the retention where both are due), and each statement of the pass can read the new index.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import { HARNESS_SCHEMA } from '../../../packages/platform/src/harness/harness-database.js';
import { migrate, schemaVersions } from '../../../packages/platform/src/harness/postgres/migrate.js';
import { DUE_AT } from '../../../packages/platform/src/harness/store/postgres/due-rules.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

const NOW = 1_000_000;
const LATER = NOW + 86_400_000;

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

/** A job row as a version-7 harness wrote it: `deadlines` are expires_at, execution_deadline and delete_at. */
function jobRow(id: string, status: string, workerId: string | null, deadlines: readonly [number, number | null, number | null]): string {
  const [expiresAt, executionDeadline, deleteAt] = deadlines;
  const ended = status === 'COMPLETED' ? `${NOW - 50}` : 'NULL';
  const started = status === 'IN_QUEUE' ? 'NULL' : `${NOW - 100}`;
  const output = status === 'COMPLETED' ? `'"ok"'` : 'NULL';
  return `('ep', '${id}', '{"input":{}}', false, '${status}', ${NOW - 200}, ${NOW - 200}, ${started}, ${ended}, ${workerId === null ? 'NULL' : `'${workerId}'`},
    ${output}, ${expiresAt}, ${executionDeadline ?? 'NULL'}, ${executionDeadline === null ? 'NULL' : 5_000}, 60000, ${deleteAt ?? 'NULL'}, ${status === 'IN_QUEUE' ? 0 : 1})`;
}

/** The index names the plan of `text` reads, with sequential scans off (an index whose expression the text does not match is never read). */
async function indexesRead(sql: postgres.Sql, text: string): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    const [row] = await tx.unsafe<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }[]>(`EXPLAIN (FORMAT JSON) ${text}`);
    const names = new Set<string>();
    const walk = (node: Record<string, unknown>): void => {
      if (typeof node['Index Name'] === 'string') names.add(node['Index Name']);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    if (row) walk(row['QUERY PLAN'][0].Plan);
    return [...names];
  });
}

it('applies each time rule to its own rows through one index on a database a version-7 harness left', async () => {
  database = await createTestDatabase();
  const raw = postgres(database.url, { max: 1, onnotice: () => undefined });
  try {
    await migrate(
      raw,
      (await schemaVersions(HARNESS_SCHEMA)).filter((step) => step.version <= 7),
    );
    await raw`INSERT INTO sw_endpoints (id) VALUES ('ep')`;
    await raw.unsafe(`INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, started_at, ended_at, worker_id,
      output, expires_at, execution_deadline, execution_timeout_ms, retention_ms, delete_at, attempt) VALUES
      ${[
        jobRow('queued-expired', 'IN_QUEUE', null, [NOW - 10, null, null]),
        jobRow('running-expired', 'IN_PROGRESS', 'w1', [NOW - 9, NOW + 5_000, null]),
        jobRow('running-timed-out', 'IN_PROGRESS', 'w2', [LATER, NOW - 8, null]),
        jobRow('ended-retained', 'COMPLETED', null, [LATER, null, NOW - 7]),
        jobRow('ended-both', 'COMPLETED', null, [NOW - 5, null, NOW - 6]),
        jobRow('queued-live', 'IN_QUEUE', null, [LATER + 1, null, null]),
      ].join(',\n')}`);
  } finally {
    await raw.end();
  }
  const handle = await database.connect(2);
  expect(handle.applied).toEqual([8]);
  const indexes = await handle.sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE tablename = 'sw_jobs'`;
  expect(indexes.map((row) => row.indexname).sort()).toEqual(['sw_jobs_due', 'sw_jobs_newest', 'sw_jobs_pkey', 'sw_jobs_queue', 'sw_jobs_running']);
  const store = await PostgresJobStore.open(handle);
  try {
    // The first deadline of all: the queued job's ttl.
    expect(await store.nextDueAt()).toBe(NOW - 10);
    const outcome = await store.applyDue(NOW);
    expect(outcome.ended.map((job) => [job.id, job.status, job.error])).toEqual([
      ['running-timed-out', 'TIMED_OUT', expect.objectContaining({ error_code: 'SW_EXECUTION_TIMEOUT' })],
    ]);
    // The ttl's deletions first, by ttl (a job whose ttl and retention are both due goes by its ttl), then the retention's.
    expect(outcome.deleted.map((job) => job.id)).toEqual(['queued-expired', 'running-expired', 'ended-both', 'ended-retained']);
    expect(outcome.stops.map((stop) => [stop.jobId, stop.workerId, stop.reason])).toEqual([
      ['running-timed-out', 'w2', 'timeout'],
      ['running-expired', 'w1', 'expired'],
    ]);
    const left = await handle.sql<{ id: string; due: string }[]>`SELECT id, ${handle.sql.unsafe(DUE_AT)} AS due FROM sw_jobs ORDER BY id`;
    expect(left.map((row) => row.id)).toEqual(['queued-live', 'running-timed-out']);
    // The timed-out job's retention (its delete_at) is now its first deadline.
    const timedOutDue = Number(left.find((row) => row.id === 'running-timed-out')?.due);
    expect(timedOutDue).toBeGreaterThan(NOW);
    expect(await store.nextDueAt()).toBe(Math.min(timedOutDue, LATER + 1));
    // A second pass at the same time finds nothing.
    expect(await store.applyDue(NOW)).toEqual({ ended: [], stops: [], deleted: [] });
  } finally {
    await store.close();
  }
  // Each statement of the time rules can read the index (its expression is the index's, word for word).
  for (const text of [
    `SELECT min(${DUE_AT}) FROM sw_jobs`,
    `SELECT id FROM sw_jobs WHERE ${DUE_AT} <= ${NOW} AND execution_deadline <= ${NOW} AND status = 'IN_PROGRESS' ORDER BY ${DUE_AT} LIMIT 500`,
    `SELECT ctid FROM sw_jobs WHERE ${DUE_AT} <= ${NOW} AND (expires_at <= ${NOW} OR delete_at <= ${NOW}) ORDER BY ${DUE_AT} LIMIT 1000`,
  ])
    expect(await indexesRead(handle.sql, text)).toEqual(['sw_jobs_due']);
});
