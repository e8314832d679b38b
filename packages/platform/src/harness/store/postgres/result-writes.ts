/**
 * @module harness/store/postgres/result-writes
 * The write of a worker's result: the change the job rules computed (job-rules.ts),
 * applied only where the job is still the attempt it answers (IN_PROGRESS, same worker,
 * same attempt: a compare-and-set, no lock held between a read and a write), with its
 * counter move. Results posted together go in one statement (coalescer.ts): one UPDATE
 * over the jobs, each row with its own fields and its own condition, and one counter
 * move per endpoint. A job named twice in one statement is written once: the other post
 * is answered "changed since" and judged on the row, as any late post.
 */
import type postgres from 'postgres';
import type { ChangedField, JobChange, JobFacts } from 'serverless-worker/internal/harness/store/job-rules.js';
import type { StoredJob } from 'serverless-worker/internal/harness/store/job-store.js';
import { Coalescer } from './coalescer.js';
import { COUNTER_SHARDS } from './job-changes.js';
import { JOB_COLUMNS, parseJobRow, toStoredJob } from './rows.js';

/** PostgreSQL's oid of text: the records' JSON goes as text and is cast. */
const TEXT_OID = 25;
/** Results written in one statement at most: their count, and their values' JSON bytes (a larger one goes alone). */
const RESULT_BATCH = { maxItems: 100, maxSize: 1 << 20 };

/** A field kept as JSON: its column and type (a job's values are json, kept byte for byte: migration 0003). */
const JSON_COLUMNS = { output: ['output', 'json'], error: ['error', 'json'], resultFrom: ['result_from', 'jsonb'] } as const;
type JsonField = keyof typeof JSON_COLUMNS;
/** Every other field a change writes: its column and SQL type. */
const PLAIN_COLUMNS: Record<Exclude<ChangedField, JsonField>, readonly [string, string]> = {
  queuedAt: ['queued_at', 'bigint'],
  startedAt: ['started_at', 'bigint'],
  endedAt: ['ended_at', 'bigint'],
  workerId: ['worker_id', 'text'],
  cancelledFrom: ['cancelled_from', 'text'],
  retries: ['retries', 'integer'],
  attempt: ['attempt', 'integer'],
  lost: ['lost', 'integer'],
  chunkCount: ['chunk_count', 'integer'],
  executionDeadline: ['execution_deadline', 'bigint'],
  executionTimeoutMs: ['execution_timeout_ms', 'bigint'],
  deleteAt: ['delete_at', 'bigint'],
  reportedAt: ['reported_at', 'bigint'],
};

// One statement text for every change: a column the change does not name keeps its value.
const RECORD_COLUMNS = [
  'n_o bigint',
  'n_endpoint_id text',
  'n_id text',
  'n_match_worker text',
  'n_match_attempt integer',
  'n_sets text[]',
  'n_status text',
  'n_counted text',
  ...Object.values(PLAIN_COLUMNS).map(([column, type]) => `n_${column} ${type}`),
].join(', ');
const SET_LIST = [
  'status = n.n_status',
  ...Object.entries(PLAIN_COLUMNS).map(([field, [column]]) => `${column} = CASE WHEN '${field}' = ANY(n.n_sets) THEN n.n_${column} ELSE j.${column} END`),
  ...Object.entries(JSON_COLUMNS).map(
    ([field, [column, type]]) => `${column} = CASE WHEN '${field}' = ANY(n.n_sets) THEN n.n_${column}::${type} ELSE j.${column} END`,
  ),
].join(', ');

interface ResultWrite {
  readonly facts: JobFacts;
  readonly change: JobChange;
  /** The JSON text of each json field the change sets (null: cleared, or JSON null, which is stored as NULL). */
  readonly json: Readonly<Record<JsonField, string | null>>;
}

export class ResultWrites {
  readonly #sql: postgres.Sql;
  readonly #writes: Coalescer<ResultWrite, StoredJob | undefined>;

  constructor(sql: postgres.Sql) {
    this.#sql = sql;
    this.#writes = new Coalescer((writes) => this.#write(writes), RESULT_BATCH);
  }

  /** Write `change` where the job is still the attempt `facts` describe; answers the ended job, or undefined when it changed since (nothing written). */
  write(facts: JobFacts, change: JobChange): Promise<StoredJob | undefined> {
    const json = {} as Record<JsonField, string | null>;
    let size = 0;
    for (const field of Object.keys(JSON_COLUMNS) as JsonField[]) {
      const value = change.fields[field];
      const text = value === undefined || value === null ? null : JSON.stringify(value);
      json[field] = text;
      size += text?.length ?? 0;
    }
    return this.#writes.add({ facts, change, json }, size);
  }

  async #write(writes: readonly ResultWrite[]): Promise<(StoredJob | undefined)[]> {
    const sql = this.#sql;
    // A job named twice: its first write only (the other is answered "changed since").
    const keys = writes.map((write) => `${write.facts.endpointId}\u0000${write.facts.id}`);
    const first = keys.map((key, index) => keys.indexOf(key) === index);
    const sent = writes.filter((_, index) => first[index]);
    const records = JSON.stringify(
      sent.map(({ facts, change }, index) => {
        const record: Record<string, unknown> = {
          n_o: index + 1,
          n_endpoint_id: facts.endpointId,
          n_id: facts.id,
          n_match_worker: facts.workerId ?? null,
          n_match_attempt: facts.attempt,
          n_sets: Object.keys(change.fields).filter((field) => field !== 'status'),
          n_status: change.fields.status,
          n_counted: change.counted ?? null,
        };
        for (const [field, [column]] of Object.entries(PLAIN_COLUMNS)) record[`n_${column}`] = change.fields[field as keyof typeof PLAIN_COLUMNS] ?? null;
        return record;
      }),
    );
    const texts = (field: JsonField): postgres.Parameter =>
      sql.array(
        sent.map((write) => write.json[field]),
        TEXT_OID,
      ) as postgres.Parameter;
    const rows = await sql`
      WITH n AS (
        SELECT r.*, o.v AS n_output, e.v AS n_error, f.v AS n_result_from
        FROM json_to_recordset(${sql.typed(records, TEXT_OID)}::json) AS r(${sql.unsafe(RECORD_COLUMNS)})
        JOIN unnest(${texts('output')}::text[]) WITH ORDINALITY AS o(v, n_o) USING (n_o)
        JOIN unnest(${texts('error')}::text[]) WITH ORDINALITY AS e(v, n_o) USING (n_o)
        JOIN unnest(${texts('resultFrom')}::text[]) WITH ORDINALITY AS f(v, n_o) USING (n_o)
      ),
      done AS (
        UPDATE sw_jobs j SET ${sql.unsafe(SET_LIST)}
        FROM n
        WHERE j.endpoint_id = n.n_endpoint_id AND j.id = n.n_id AND j.status = 'IN_PROGRESS'
          AND j.worker_id IS NOT DISTINCT FROM n.n_match_worker AND j.attempt = n.n_match_attempt
        RETURNING ${sql.unsafe(JOB_COLUMNS)}
      ),
      counted AS (
        INSERT INTO sw_counters (endpoint_id, shard, completed, failed, retried)
        SELECT n.n_endpoint_id, ${Math.floor(Math.random() * COUNTER_SHARDS)},
          count(*) FILTER (WHERE n.n_counted = 'completed'), count(*) FILTER (WHERE n.n_counted = 'failed'), count(*) FILTER (WHERE n.n_counted = 'retried')
        FROM done JOIN n ON n.n_endpoint_id = done.endpoint_id AND n.n_id = done.id
        WHERE n.n_counted IS NOT NULL
        GROUP BY n.n_endpoint_id
        ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = sw_counters.completed + EXCLUDED.completed,
          failed = sw_counters.failed + EXCLUDED.failed, retried = sw_counters.retried + EXCLUDED.retried
        RETURNING 1
      )
      SELECT done.* FROM done`;
    const ended = new Map<string, StoredJob>();
    for (const row of rows) {
      const job = toStoredJob(parseJobRow(row));
      ended.set(`${job.endpointId}\u0000${job.id}`, job);
    }
    return writes.map((write, index) => {
      const job = first[index] ? ended.get(keys[index] as string) : undefined;
      // The output as posted: a JSON null one is NULL in the row. A cleared one (a FAILED job's progress) stays absent.
      return job && write.change.fields.output !== undefined ? { ...job, output: write.change.fields.output } : job;
    });
  }
}
