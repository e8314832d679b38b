/**
 * @module harness/store/postgres/result-writes
 * The write of a worker's result: the change the job rules computed (job-rules.ts),
 * applied only where the job is still the attempt it answers (IN_PROGRESS, same worker,
 * same attempt: a compare-and-set, no lock held between a read and a write), with its
 * counter move. Results posted together go in one statement (coalescer.ts): one UPDATE
 * over the jobs, each row with its own fields and its own condition, and one counter
 * move per endpoint. A job named twice in one statement is written once: the other post
 * is answered "changed since" and judged on the row, as any late post.
 *
 * A job taken through this process is found by its row's place (ctid, answered by the take):
 * a Tid Scan fetches each row directly, 3 µs a row. Joined on the job's key, the planner,
 * its statistics saying few jobs run, read every running job through sw_jobs_running on each
 * statement instead (a bitmap scan of the index's dead entries too: 0.2 of 0.4 ms for 10
 * results in the drain). A plan PostgreSQL cached while the table was small still reads the
 * table until autovacuum analyzes it again (a scan of every row: 6.7 ms a result with 20 000
 * running, 0.13 ms once analyzed). A row changed since its take (a progress post, a
 * heartbeat, a stream's chunk) has moved: the write by place matches nothing, and
 * completion.ts writes it again by key.
 */
import type postgres from 'postgres';
import type { ChangedField, JobChange, JobFacts, StoredJob, StoreEvent } from 'serverless-worker/internal';
import { Coalescer } from './coalescer.js';
import { COUNTER_SHARDS } from './job-changes.js';
import { endedFromClaims, endedJobs, jobKey } from './ended-jobs.js';
import { JOB_COLUMNS } from './rows.js';
import { withView } from './ended-view.js';
import { eventsText, notifySql, type StatementNotices } from './statement-notices.js';

/** PostgreSQL's oid of text: each column's values go as one text array, cast to the column's type in the statement. */
const TEXT_OID = 25;
/**
 * Results written in one statement at most: their count, and their values' JSON bytes (a larger
 * one goes alone); two statements in flight at once (one runs while the other's commit is
 * flushed), the posts of one job never in both (the coalescer keeps them in order).
 */
const RESULT_BATCH = { maxItems: 100, maxSize: 1 << 20, inFlight: 2 };

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

/** A field's column, and its SQL type. */
const COLUMNS: ReadonlyArray<readonly [ChangedField, string, string]> = [
  ...(Object.entries(PLAIN_COLUMNS) as Array<[Exclude<ChangedField, JsonField>, readonly [string, string]]>).map(
    ([field, [column, type]]) => [field, column, type] as const,
  ),
  ...(Object.entries(JSON_COLUMNS) as Array<[JsonField, readonly [string, string]]>).map(([field, [column, type]]) => [field, column, type] as const),
];

/**
 * The statement for writes that name fields as `shape` says (its first letter: t when every
 * write names its row's place, found by it, k when they are found by key; then one letter a
 * column, in the order of COLUMNS: n when none of the writes names it, a when all do, s when
 * some do; last, c when every write carries its job as claimed, r when the rows are read back),
 * its columns passed as one array each (an unnest of typed arrays costs PostgreSQL
 * far less than a JSON record set). A column no write names is not in the SET list; one every
 * write names is set as it is; one some name is set by a CASE on its own flag. Its text is the
 * same for the same shape, so PostgreSQL plans it once a connection.
 */
function statementOf(shape: string, notifyAs: string | undefined): Statement {
  const byPlace = shape.startsWith('t');
  const fromClaims = shape.endsWith('c');
  const arrays: UnnestArray[] = [...KEY_ARRAYS, ...(byPlace ? PLACE_ARRAYS : []), ...(notifyAs === undefined ? [] : NOTICE_ARRAYS)];
  const sets = ['status = n.n_status'];
  COLUMNS.forEach(([field, column, type], index) => {
    const named = shape[index + 1];
    if (named === 'n') return;
    // A JSON value travels as text and is cast where it is written (json keeps its bytes).
    const json = field in JSON_COLUMNS;
    arrays.push({
      name: `v_${column}`,
      type: json ? 'text' : type,
      read: json ? (write) => write.json[field as JsonField] : (write) => asText(write.change.fields[field]),
    });
    const value = json ? `n.v_${column}::${type}` : `n.v_${column}`;
    if (named === 'a') {
      sets.push(`${column} = ${value}`);
      return;
    }
    arrays.push({ name: `s_${column}`, type: 'boolean', read: (write) => (field in write.change.fields ? 'true' : 'false') });
    sets.push(`${column} = CASE WHEN n.s_${column} THEN ${value} ELSE j.${column} END`);
  });
  const names = arrays.map(({ name }) => name);
  const types = arrays.map(({ type }) => type);
  const unnest = types.map((type, index) => `$${index + 1}::${type}[]`).join(', ');
  const counter = `$${types.length + 1}::smallint`;
  // A notifying statement's last parameter: the payloads it carries for earlier statements (statement-notices.ts).
  const carried = `$${types.length + 2}::text[]`;
  const text = `
    WITH n AS (
      SELECT * FROM unnest(${unnest}) AS n(${names.join(', ')})
    ),
    done AS (
      UPDATE sw_jobs j SET ${sets.join(', ')}
      FROM n
      WHERE ${byPlace ? 'j.ctid = n.n_ctid AND j.status = n.n_match_status' : "j.status = 'IN_PROGRESS'"}
        AND j.endpoint_id = n.n_endpoint_id AND j.id = n.n_id
        AND j.worker_id IS NOT DISTINCT FROM n.n_match_worker AND j.attempt = n.n_match_attempt
      RETURNING ${fromClaims ? VIEW_COLUMNS : JOB_COLUMNS}
    ),
    counted AS (
      INSERT INTO sw_counters (endpoint_id, shard, completed, failed, retried)
      SELECT n.n_endpoint_id, ${counter},
        count(*) FILTER (WHERE n.n_counted = 'completed'), count(*) FILTER (WHERE n.n_counted = 'failed'), count(*) FILTER (WHERE n.n_counted = 'retried')
      FROM done JOIN n ON n.n_endpoint_id = done.endpoint_id AND n.n_id = done.id
      WHERE n.n_counted IS NOT NULL
      GROUP BY n.n_endpoint_id
      ORDER BY n.n_endpoint_id
      ON CONFLICT (endpoint_id, shard) DO UPDATE SET completed = sw_counters.completed + EXCLUDED.completed,
        failed = sw_counters.failed + EXCLUDED.failed, retried = sw_counters.retried + EXCLUDED.retried
      RETURNING 1
    ) ${notifyAs === undefined ? '' : noticeSql(notifyAs, carried)}
    SELECT ${fromClaims ? 'done.endpoint_id, done.id' : 'done.*'} FROM done ${notifyAs === undefined ? '' : ', notified'}`;
  return { text, readers: arrays.map(({ read }) => read) };
}

/** The shape of `writes`' statement (statementOf). */
function shapeOf(writes: readonly ResultWrite[]): string {
  const byPlace = writes.every((write) => write.ctid !== undefined);
  let shape = byPlace ? 't' : 'k';
  for (const [field] of COLUMNS) {
    let count = 0;
    for (const { change } of writes) if (field in change.fields) count++;
    shape += count === 0 ? 'n' : count === writes.length ? 'a' : 's';
  }
  return shape + (byPlace && writes.every((write) => write.claimed !== undefined) ? 'c' : 'r');
}

/**
 * What a statement whose writes all carry their job as claimed answers of each written row (its
 * key) and what its notice's view reads (noticeSql): the ended jobs are built (ended-jobs.ts),
 * not read back (a row of every column a job, its request parsed again, was a third of the drain's
 * allocations).
 */
const VIEW_COLUMNS = 'j.endpoint_id, j.id, j.status, j.queued_at, j.started_at, j.ended_at, j.output, j.error, j.retries';

/** A statement's text, and what each of its arrays holds for a write (as text; null: NULL), in the order of its parameters. */
interface Statement {
  readonly text: string;
  readonly readers: readonly Reader[];
}
type Reader = (write: ResultWrite) => string | null;

function asText(value: unknown): string | null {
  return value === undefined || value === null ? null : String(value);
}

/** One array of the statement's unnest: its column name in n, its SQL type, and what it holds for a write. */
interface UnnestArray {
  readonly name: string;
  readonly type: string;
  readonly read: Reader;
}

/** The arrays every statement has: the job's key, the attempt it answers, the new status and the counter it moves. */
const KEY_ARRAYS: readonly UnnestArray[] = [
  { name: 'n_endpoint_id', type: 'text', read: (write) => write.facts.endpointId },
  { name: 'n_id', type: 'text', read: (write) => write.facts.id },
  { name: 'n_match_worker', type: 'text', read: (write) => write.facts.workerId ?? null },
  { name: 'n_match_attempt', type: 'integer', read: (write) => String(write.facts.attempt) },
  { name: 'n_status', type: 'text', read: (write) => write.change.fields.status },
  { name: 'n_counted', type: 'text', read: (write) => write.change.counted ?? null },
];
/**
 * By place: the row's place, and the status it must have. The status goes as a value (the facts'
 * status, IN_PROGRESS), not a constant: the constant matches sw_jobs_running's predicate, and the
 * planner, its statistics saying few jobs run, read that index rather than fetch each row by its place.
 */
const PLACE_ARRAYS: readonly UnnestArray[] = [
  { name: 'n_ctid', type: 'tid', read: (write) => write.ctid ?? null },
  { name: 'n_match_status', type: 'text', read: (write) => write.facts.status },
];

/**
 * While another harness listens: each written job's events, notified in the statement (statement-notices.ts).
 * A job's 'changed' event carries the ended job's view, built here from the written row as toJobView builds
 * it (the output as posted: a JSON null output is NULL in the row), left out past 2 000 bytes as
 * encodePayloads leaves it out (a reader in another process reads the job instead).
 */
function noticeSql(origin: string, carried: string): string {
  const view = `'{"id":' || to_json(done.id)::text || ',"status":' || to_json(done.status)::text
    || CASE WHEN done.started_at IS NOT NULL THEN ',"delayTime":' || greatest(0, done.started_at - done.queued_at) ELSE '' END
    || CASE WHEN done.ended_at IS NOT NULL AND done.started_at IS NOT NULL THEN ',"executionTime":' || greatest(0, done.ended_at - done.started_at) ELSE '' END
    || CASE WHEN done.output IS NOT NULL THEN ',"output":' || done.output::text WHEN n.n_output_null THEN ',"output":null' ELSE '' END
    || CASE WHEN done.error IS NOT NULL THEN ',"error":' || to_json(done.error::text)::text ELSE '' END
    || CASE WHEN done.retries > 0 THEN ',"retries":' || done.retries ELSE '' END || '}'`;
  return `,
    carried AS (SELECT c.payload FROM unnest(${carried}) AS c(payload)),
    written_events AS (
      SELECT nullif(concat_ws(',', n.n_events_before,
          n.n_changed || CASE WHEN octet_length(n.n_changed) + octet_length(v.view) < ${MAX_EVENT_WITH_VIEW_BYTES - 10} THEN ',"ended":' || v.view ELSE '' END || '}',
          n.n_events_after), '') AS events
      FROM done JOIN n ON n.n_endpoint_id = done.endpoint_id AND n.n_id = done.id
      CROSS JOIN LATERAL (SELECT ${view} AS view) v
    ),
    notified AS (${notifySql('written_events', 'written_events.events', origin, 'carried')})`;
}

/** Bytes of an event with an ended job's view at most (notifications.ts's bound). */
const MAX_EVENT_WITH_VIEW_BYTES = 2_000;

/**
 * The notice's arrays: the job's 'changed' event as JSON without its closing brace (the view goes after it),
 * the events before and after it (comma-joined JSON), and whether its output was posted as JSON null.
 */
const NOTICE_ARRAYS: readonly UnnestArray[] = [
  { name: 'n_events_before', type: 'text', read: (write) => noticeOf(write).before },
  { name: 'n_changed', type: 'text', read: (write) => noticeOf(write).changed },
  { name: 'n_events_after', type: 'text', read: (write) => noticeOf(write).after },
  { name: 'n_output_null', type: 'boolean', read: (write) => (write.change.fields.output === null ? 'true' : 'false') },
];

/** A write's events as its notice sends them (see NOTICE_ARRAYS), made once a write and only by a notifying statement. */
function noticeOf(write: ResultWrite): Notice {
  return (write.notice ??= noticeTexts(write.facts.id, write.events));
}

function noticeTexts(jobId: string, events: readonly StoreEvent[]): Notice {
  const at = events.findIndex((event) => event.type === 'changed' && event.jobId === jobId);
  const changed = events[at];
  const text = (some: readonly StoreEvent[]): string | null => (some.length > 0 ? eventsText(some) : null);
  if (at < 0 || !changed) return { before: text(events), changed: null, after: null };
  return { before: text(events.slice(0, at)), changed: JSON.stringify(changed).slice(0, -1), after: text(events.slice(at + 1)) };
}

/** The statements made so far, by shape (a handful: the shapes of the changes the job rules make). */
const STATEMENTS = new Map<string, Statement>();

interface ResultWrite {
  readonly facts: JobFacts;
  readonly change: JobChange;
  /** The JSON text of each json field the change sets (null: cleared, or JSON null, which is stored as NULL). */
  readonly json: Readonly<Record<JsonField, string | null>>;
  /** The row's place (ctid) as the take left it, when known: the row is found by it. */
  readonly ctid: string | undefined;
  /** With `ctid`: the job as the claim left that row version, when this process kept it (the ended job is built from it). */
  readonly claimed: StoredJob | undefined;
  /** Its events, for the statement's notification while another harness listens (NOTICE_ARRAYS). */
  readonly events: readonly StoreEvent[];
  /** Their texts, made from `events` by the first notifying statement that carries the write (none while no other harness listens). */
  notice?: Notice;
}

/** A write's events as JSON texts: those before its job's 'changed' event, that event (its closing brace left off), those after. */
interface Notice {
  readonly before: string | null;
  readonly changed: string | null;
  readonly after: string | null;
}

export class ResultWrites {
  readonly #sql: postgres.Sql;
  readonly #writes: Coalescer<ResultWrite, StoredJob | undefined>;
  /** The counter shard of the last statement (the next one takes the next shard). */
  #shard = Math.floor(Math.random() * COUNTER_SHARDS);

  readonly #notices: StatementNotices | undefined;
  /** The statements that notify as this store, by shape. */
  readonly #notifying = new Map<string, Statement>();

  /** `notices`: the statements notify other harnesses of their events while one listens (statement-notices.ts). */
  constructor(sql: postgres.Sql, notices?: StatementNotices) {
    this.#sql = sql;
    this.#notices = notices;
    this.#writes = new Coalescer((writes) => this.#write(writes), RESULT_BATCH);
  }

  /**
   * Write `change` where the job is still the attempt `facts` describe (and, with `ctid`, where its
   * row is still that version); answers the ended job, or undefined when it changed since (nothing written).
   * `claimed`, with `ctid`: the job as that row version holds it (the claim's), which the ended job is built from.
   */
  write(facts: JobFacts, change: JobChange, ctid?: string, events: readonly StoreEvent[] = [], claimed?: StoredJob): Promise<StoredJob | undefined> {
    const json = {} as Record<JsonField, string | null>;
    let size = 0;
    for (const field of Object.keys(JSON_COLUMNS) as JsonField[]) {
      const value = change.fields[field];
      const text = value === undefined || value === null ? null : JSON.stringify(value);
      json[field] = text;
      size += text?.length ?? 0;
    }
    const fromClaim = ctid !== undefined && change.kind === 'ended' && !change.dropsChunks ? claimed : undefined;
    return this.#writes.add({ facts, change, json, ctid, claimed: fromClaim, events }, size, jobKey(facts));
  }

  // Kept small, its arrays built by one loop (textArray): a call of sql.array and a closure for each
  // array, inlined, made this function's optimized code take 90 ms to compile, again after each deopt.
  async #write(writes: readonly ResultWrite[]): Promise<(StoredJob | undefined)[]> {
    // A job named twice: its first write only (the other is answered "changed since").
    const keys = writes.map((write) => jobKey(write.facts));
    const seen = new Set<string>();
    const first = keys.map((key) => {
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const sent = writes.filter((_, index) => first[index]);
    const notice = this.#notices?.begin();
    const notifyAs = notice?.notify === true ? this.#notices?.origin : undefined;
    const shape = shapeOf(sent);
    // The notifying statements name this store's origin: kept by this store, not shared by every store of the process.
    const statements = notifyAs === undefined ? STATEMENTS : this.#notifying;
    let statement = statements.get(shape);
    if (!statement) statements.set(shape, (statement = statementOf(shape, notifyAs)));
    const parameters: Array<postgres.Parameter | number> = [];
    for (const read of statement.readers) parameters.push(this.#textArray(sent, read));
    // Statements in flight together move different counter rows (neither waits for the other's commit), each endpoint's in one order.
    this.#shard = (this.#shard + 1) % COUNTER_SHARDS;
    parameters.push(this.#shard);
    if (notice?.notify === true) parameters.push(this.#sql.array([...notice.carried], TEXT_OID) as postgres.Parameter);
    let rows: postgres.RowList<postgres.Row[]>;
    try {
      rows = await this.#sql.unsafe(statement.text, parameters as never[], { prepare: true });
    } catch (error) {
      notice?.done();
      throw error;
    }
    let answers: (StoredJob | undefined)[] = [];
    try {
      answers = shape.endsWith('c') ? endedFromClaims(rows, writes, keys, first) : endedJobs(rows, writes, keys, first);
    } finally {
      // A silent statement's events are held for a later one (statement-notices.ts), each ended job's with its view.
      notice?.done(notice.holds ? writes.flatMap((write, index) => (answers[index] ? withView(write.events, answers[index]) : [])) : []);
    }
    return answers;
  }

  /** What `read` answers for each write, as one text array (cast to the column's type in the statement). */
  #textArray(writes: readonly ResultWrite[], read: Reader): postgres.Parameter {
    const values: Array<string | null> = [];
    for (const write of writes) values.push(read(write));
    return this.#sql.array(values, TEXT_OID) as postgres.Parameter;
  }
}
