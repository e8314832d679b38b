/**
 * @module harness/store/postgres/workers
 * Worker presence in PostgreSQL (`sw_workers`): touched on each take and heartbeat,
 * removed once across processes (`DELETE … RETURNING`: the process whose delete
 * returned the row requeues the worker's jobs, in the same transaction).
 */
import type postgres from 'postgres';
import type { GoneWorker, RequeueRules, StoredWorker, TouchWorker } from 'serverless-worker/internal';
import { lockJob, requeueLost, saveChanged, type Changes, type Tx } from './job-changes.js';
import { WORKER_COLUMNS, toStoredWorker } from './rows.js';

export async function touchWorker(tx: Tx, endpointId: string, workerId: string, touch: TouchWorker, now: number, changes: Changes): Promise<StoredWorker> {
  const rows = await tx<{ created: boolean }[]>`
    WITH endpoint AS (INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING)
    INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at, initializing, heartbeats, ping_interval_ms)
    VALUES (${endpointId}, ${workerId}, ${now}, ${now}, ${touch.initializing ?? false}, ${touch.heartbeats === true}, ${touch.pingIntervalMs ?? null})
    ON CONFLICT (endpoint_id, id) DO UPDATE SET
      last_seen_at = EXCLUDED.last_seen_at,
      initializing = CASE WHEN ${touch.initializing === undefined} THEN sw_workers.initializing ELSE EXCLUDED.initializing END,
      heartbeats = sw_workers.heartbeats OR EXCLUDED.heartbeats,
      ping_interval_ms = coalesce(EXCLUDED.ping_interval_ms, sw_workers.ping_interval_ms)
    RETURNING (xmax = 0) AS created`;
  const reported = touch.reportedJobIds ?? [];
  if (reported.length > 0) {
    await tx`UPDATE sw_jobs SET reported_at = ${now}
      WHERE endpoint_id = ${endpointId} AND id IN ${tx(reported)} AND status = 'IN_PROGRESS' AND worker_id = ${workerId}`;
  }
  if (rows[0]?.created === true) changes.events.push({ type: 'worker', endpointId, workerId });
  const worker = await tx`SELECT ${tx.unsafe(WORKER_COLUMNS)} FROM sw_workers w WHERE w.endpoint_id = ${endpointId} AND w.id = ${workerId}`;
  return toStoredWorker(worker[0]);
}

/**
 * touchWorker without reported jobs (every job-take and the liveness sweep call it), in
 * one statement: the endpoint when missing, the presence upsert, and the worker as it is
 * now. Answers the worker and whether it was created.
 */
export async function touchWorkerAtOnce(
  sql: postgres.Sql,
  endpointId: string,
  workerId: string,
  touch: TouchWorker,
  now: number,
): Promise<{ worker: StoredWorker; created: boolean }> {
  const rows = await sql`
    WITH endpoint AS (INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING),
    w AS (
      INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at, initializing, heartbeats, ping_interval_ms)
      VALUES (${endpointId}, ${workerId}, ${now}, ${now}, ${touch.initializing ?? false}, ${touch.heartbeats === true}, ${touch.pingIntervalMs ?? null})
      ON CONFLICT (endpoint_id, id) DO UPDATE SET
        last_seen_at = EXCLUDED.last_seen_at,
        initializing = CASE WHEN ${touch.initializing === undefined} THEN sw_workers.initializing ELSE EXCLUDED.initializing END,
        heartbeats = sw_workers.heartbeats OR EXCLUDED.heartbeats,
        ping_interval_ms = coalesce(EXCLUDED.ping_interval_ms, sw_workers.ping_interval_ms)
      RETURNING *, (xmax = 0) AS created
    )
    SELECT ${sql.unsafe(WORKER_COLUMNS)}, w.created FROM w`;
  const row = rows[0];
  return { worker: toStoredWorker(row), created: row?.created === true };
}

export async function getWorker(sql: postgres.Sql, endpointId: string, workerId: string): Promise<StoredWorker | undefined> {
  const rows = await sql`SELECT ${sql.unsafe(WORKER_COLUMNS)} FROM sw_workers w WHERE w.endpoint_id = ${endpointId} AND w.id = ${workerId}`;
  return rows[0] ? toStoredWorker(rows[0]) : undefined;
}

export async function listWorkers(sql: postgres.Sql, endpointId: string): Promise<StoredWorker[]> {
  const rows = await sql`SELECT ${sql.unsafe(WORKER_COLUMNS)} FROM sw_workers w WHERE w.endpoint_id = ${endpointId} ORDER BY w.first_seen_at, w.id`;
  return rows.map(toStoredWorker);
}

/** Requeue the jobs `workerId` holds (its presence row already deleted by this transaction). */
async function requeueJobsOf(tx: Tx, endpointId: string, workerId: string, rules: RequeueRules, now: number, changes: Changes): Promise<GoneWorker> {
  const held = await tx<{ id: string }[]>`
    SELECT id FROM sw_jobs WHERE endpoint_id = ${endpointId} AND worker_id = ${workerId} AND status = 'IN_PROGRESS' ORDER BY started_at, queue_seq`;
  const requeued: string[] = [];
  const endedBefore = changes.ended.length;
  for (const { id } of held) {
    const job = await lockJob(tx, endpointId, id);
    if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId) continue;
    if (requeueLost(job, rules.maxRequeues, now, changes)) requeued.push(id);
    await saveChanged(tx, job);
  }
  changes.events.push({ type: 'worker', endpointId, workerId });
  return { endpointId, workerId, requeued, ended: changes.ended.slice(endedBefore), stops: [] };
}

export async function removeWorker(
  tx: Tx,
  endpointId: string,
  workerId: string,
  rules: RequeueRules,
  now: number,
  changes: Changes,
): Promise<GoneWorker | undefined> {
  const deleted = await tx`DELETE FROM sw_workers WHERE endpoint_id = ${endpointId} AND id = ${workerId} RETURNING id`;
  if (deleted.length === 0) return undefined;
  return requeueJobsOf(tx, endpointId, workerId, rules, now, changes);
}

export async function sweepSilentWorkers(tx: Tx, silentBefore: number, rules: RequeueRules, now: number, changes: Changes): Promise<GoneWorker[]> {
  const silent = await tx<{ endpoint_id: string; id: string }[]>`
    DELETE FROM sw_workers WHERE (endpoint_id, id) IN (
      SELECT endpoint_id, id FROM sw_workers WHERE heartbeats AND last_seen_at < ${silentBefore} ORDER BY last_seen_at FOR UPDATE SKIP LOCKED
    ) RETURNING endpoint_id, id`;
  const gone: GoneWorker[] = [];
  for (const worker of silent) gone.push(await requeueJobsOf(tx, worker.endpoint_id, worker.id, rules, now, changes));
  return gone;
}

export async function unreportedJobs(sql: postgres.Sql, endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT j.id FROM sw_jobs j JOIN sw_workers w ON w.endpoint_id = j.endpoint_id AND w.id = j.worker_id
    WHERE j.endpoint_id = ${endpointId} AND j.worker_id = ${workerId} AND j.status = 'IN_PROGRESS'
      AND greatest(coalesce(j.started_at, ${unreportedBefore}), coalesce(j.reported_at, 0)) < ${unreportedBefore}
    ORDER BY j.started_at, j.queue_seq`;
  return rows.map((row) => row.id);
}
