/**
 * The harness's migrations as they were before they became .sql files (the TS strings of
 * src/harness/store/postgres/schema.ts at versions 1..3, with the migrate function that ran
 * them), kept word for word: a database they made must be carried on by the .sql files
 * without anything run twice (legacy-upgrade.test.ts).
 */
import type postgres from 'postgres';

/** Key of the advisory lock that serialises migrations ('sw-schema' as a number). */
const MIGRATION_LOCK = 0x73772d736368;

export interface LegacyMigration {
  readonly version: number;
  readonly description: string;
  readonly statements: string;
}

export const LEGACY_MIGRATIONS: readonly LegacyMigration[] = [
  {
    version: 1,
    description: 'endpoints, jobs, chunks, workers, counters',
    statements: `
      CREATE TABLE sw_endpoints (
        id text PRIMARY KEY,
        default_execution_timeout_ms bigint
      );
      -- Counters since the endpoint was created, split over shards so that concurrent
      -- completions on one endpoint do not queue on one row; /health sums the shards.
      CREATE TABLE sw_counters (
        endpoint_id text NOT NULL,
        shard smallint NOT NULL,
        completed bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0,
        retried bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (endpoint_id, shard)
      );
      CREATE SEQUENCE sw_queue_seq;
      CREATE TABLE sw_jobs (
        endpoint_id text NOT NULL,
        id text NOT NULL,
        -- Submission order: newest first for the request list.
        seq bigint GENERATED ALWAYS AS IDENTITY,
        -- Queue order: a new value each time the job enters the queue.
        queue_seq bigint NOT NULL DEFAULT nextval('sw_queue_seq'),
        request jsonb NOT NULL,
        sync boolean NOT NULL,
        status text NOT NULL,
        submitted_at bigint NOT NULL,
        queued_at bigint NOT NULL,
        started_at bigint,
        ended_at bigint,
        worker_id text,
        output jsonb,
        error jsonb,
        retries integer NOT NULL DEFAULT 0,
        attempt integer NOT NULL DEFAULT 0,
        lost integer NOT NULL DEFAULT 0,
        result_from jsonb,
        chunk_count integer NOT NULL DEFAULT 0,
        unread_count integer NOT NULL DEFAULT 0,
        expires_at bigint NOT NULL,
        execution_deadline bigint,
        execution_timeout_ms bigint,
        retention_ms bigint NOT NULL,
        delete_at bigint,
        reported_at bigint,
        PRIMARY KEY (endpoint_id, id)
      );
      -- take: the oldest queued jobs of an endpoint (FOR UPDATE SKIP LOCKED).
      CREATE INDEX sw_jobs_queue ON sw_jobs (endpoint_id, queue_seq) WHERE status = 'IN_QUEUE';
      -- list: newest first, all states or some.
      CREATE INDEX sw_jobs_newest ON sw_jobs (endpoint_id, seq DESC);
      CREATE INDEX sw_jobs_state_newest ON sw_jobs (endpoint_id, status, seq DESC);
      -- applyDue / nextDueAt: each time rule's deadline.
      CREATE INDEX sw_jobs_expires ON sw_jobs (expires_at);
      CREATE INDEX sw_jobs_execution ON sw_jobs (execution_deadline) WHERE execution_deadline IS NOT NULL;
      CREATE INDEX sw_jobs_delete ON sw_jobs (delete_at) WHERE delete_at IS NOT NULL;
      -- a worker's jobs (presence, requeue of a gone worker's jobs).
      CREATE INDEX sw_jobs_worker ON sw_jobs (endpoint_id, worker_id) WHERE worker_id IS NOT NULL;
      CREATE TABLE sw_chunks (
        endpoint_id text NOT NULL,
        job_id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        chunk jsonb NOT NULL,
        PRIMARY KEY (endpoint_id, job_id, seq),
        FOREIGN KEY (endpoint_id, job_id) REFERENCES sw_jobs (endpoint_id, id) ON DELETE CASCADE
      );
      CREATE TABLE sw_workers (
        endpoint_id text NOT NULL,
        id text NOT NULL,
        first_seen_at bigint NOT NULL,
        last_seen_at bigint NOT NULL,
        initializing boolean NOT NULL DEFAULT false,
        heartbeats boolean NOT NULL DEFAULT false,
        ping_interval_ms bigint,
        PRIMARY KEY (endpoint_id, id)
      );
      -- sweepSilentWorkers: workers with heartbeats, by last heard of.
      CREATE INDEX sw_workers_silent ON sw_workers (last_seen_at) WHERE heartbeats;
    `,
  },
  {
    version: 2,
    description: 'management records (templates, network volumes, endpoints) and launcher slots',
    statements: `
      -- The /v1 records, shared by every harness on the database. Each row keeps the
      -- whole record (jsonb) and, as columns, what the store's rules query or the
      -- database enforces: unique template names, the references of an endpoint (a
      -- template or volume in use cannot be deleted), creation order (seq).
      CREATE TABLE sw_mgmt_templates (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        name text NOT NULL UNIQUE,
        -- created without isServerless: recorded false, yet allowed to back an endpoint
        serverless_unset boolean NOT NULL,
        record jsonb NOT NULL
      );
      CREATE TABLE sw_mgmt_network_volumes (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        record jsonb NOT NULL
      );
      CREATE TABLE sw_mgmt_endpoints (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        template_id text NOT NULL REFERENCES sw_mgmt_templates (id),
        network_volume_id text REFERENCES sw_mgmt_network_volumes (id),
        record jsonb NOT NULL
      );
      CREATE INDEX sw_mgmt_endpoints_template ON sw_mgmt_endpoints (template_id);
      CREATE INDEX sw_mgmt_endpoints_volume ON sw_mgmt_endpoints (network_volume_id) WHERE network_volume_id IS NOT NULL;
      -- Launcher worker slots: slot numbers 0..workersMax-1 of an endpoint, each held by
      -- one machine's worker until its lease (epoch ms) passes; a machine renews its
      -- leases every launcher tick and deletes a slot when its worker exits.
      CREATE TABLE sw_launcher_slots (
        endpoint_id text NOT NULL,
        slot integer NOT NULL,
        machine_id text NOT NULL,
        worker_id text NOT NULL,
        lease_expires_at bigint NOT NULL,
        PRIMARY KEY (endpoint_id, slot)
      );
      CREATE INDEX sw_launcher_slots_machine ON sw_launcher_slots (machine_id);
    `,
  },
  {
    version: 3,
    description: 'job values as json text (NUL and lone surrogates kept), the policy timeout as a column',
    statements: `
      -- jsonb refuses what JSON allows: the escape \\u0000 and lone surrogates (\\ud800)
      -- cannot become jsonb text. json keeps the text exactly as sent (checked for
      -- syntax only), so every value a caller or a handler can send is kept byte for byte.
      -- Nothing reads inside these columns but the take statement, which needs the
      -- policy's executionTimeout: kept as a column, read once at submission, so that no
      -- json operator has to de-escape a job's input.
      ALTER TABLE sw_jobs ADD COLUMN policy_timeout_ms bigint;
      UPDATE sw_jobs SET policy_timeout_ms = (request->'policy'->>'executionTimeout')::bigint;
      ALTER TABLE sw_jobs
        ALTER COLUMN request TYPE json USING request::json,
        ALTER COLUMN output TYPE json USING output::json,
        ALTER COLUMN error TYPE json USING error::json;
      ALTER TABLE sw_chunks ALTER COLUMN chunk TYPE json USING chunk::json;
    `,
  },
];

const SCHEMA_VERSION = LEGACY_MIGRATIONS[LEGACY_MIGRATIONS.length - 1]?.version ?? 0;

/**
 * Bring the database to SCHEMA_VERSION; answers the versions applied by this call
 * (none when another start did them). Refuses a database migrated by a newer harness.
 */
export async function legacyMigrate(sql: postgres.Sql): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS sw_schema_version (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM sw_schema_version`;
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    if (newest > SCHEMA_VERSION) {
      throw new Error(
        `The database's job store schema is at version ${newest}, newer than this harness knows (${SCHEMA_VERSION}): ` +
          'upgrade serverless-worker on this machine, or point --store at another database',
      );
    }
    const applied: number[] = [];
    for (const migration of LEGACY_MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.statements);
      await tx`INSERT INTO sw_schema_version (version, description) VALUES (${migration.version}, ${migration.description})`;
      applied.push(migration.version);
    }
    return applied;
  });
}
