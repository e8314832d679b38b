/**
 * @module harness/store/postgres/maintenance-check
 * A periodic look at what keeps the job store's tables from being cleaned (issue 33,
 * item 4), warned in the log once per condition (again only after it cleared and came
 * back):
 *
 * - vacuum held back: a transaction of this database (or a prepared one) open longer
 *   than `oldTransactionMs` that holds an xid or a snapshot: no row deleted or updated
 *   after it started can be removed by vacuum anywhere in the database while it lasts;
 * - dead rows piling up: a table of the store with more than `deadRowsRatio` times as
 *   many dead rows as live ones (and at least `minDeadRows`) that no vacuum has cleaned
 *   for `vacuumQuietMs`;
 * - index bloat: a table whose indexes outweigh the table `indexRatio` times over (and
 *   weigh at least `minIndexBytes`): a queue's indexes keep their pages after the rows
 *   are gone (only REINDEX gives them back, or the TRUNCATE of tables a cleanup left
 *   empty: job-table-vacuum.ts).
 *
 * The round then rebuilds the indexes that outgrew what their table's live rows need
 * (index-rebuild.ts: REINDEX INDEX CONCURRENTLY, one log line each).
 *
 * Cheap: four catalog reads every `intervalMs` (5 min), by one harness of those on the
 * database per round (the one whose update of sw_maintenance's `checked_at` wins, the
 * database's clock deciding; pg-boss's maintenance takes its turn the same way), which
 * keeps there the conditions warned of, so that a condition is warned of once whichever
 * harness finds it. What
 * PostgreSQL hides from a user without `pg_read_all_stats` (other users' sessions) is
 * not seen.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import { type Clock, repeatEvery, systemClock, type TimerHandle } from 'serverless-worker/internal';
import { INDEX_REBUILD_LIMITS, rebuildBloatedIndexes, type IndexRebuildLimits } from './index-rebuild.js';

export interface MaintenanceLimits extends IndexRebuildLimits {
  /** How often a round runs (among all harnesses on the database), ms. */
  readonly intervalMs: number;
  /** A transaction open longer than this holds vacuum back, ms. */
  readonly oldTransactionMs: number;
  /** Dead rows beyond this many times the live ones... */
  readonly deadRowsRatio: number;
  /** ...and at least this many... */
  readonly minDeadRows: number;
  /** ...with no vacuum for this long, ms. */
  readonly vacuumQuietMs: number;
  /** A table's indexes beyond this many times its size... */
  readonly indexRatio: number;
  /** ...and at least this many bytes. */
  readonly minIndexBytes: number;
}

export const MAINTENANCE_LIMITS: MaintenanceLimits = {
  intervalMs: 5 * 60_000,
  oldTransactionMs: 10 * 60_000,
  deadRowsRatio: 4,
  minDeadRows: 10_000,
  vacuumQuietMs: 60 * 60_000,
  indexRatio: 3,
  minIndexBytes: 64 << 20,
  ...INDEX_REBUILD_LIMITS,
};

/** One condition found: `key` names it (a warning goes out once per key), `message` says what it is and what to do. */
export interface MaintenanceFinding {
  readonly key: string;
  readonly message: string;
}

const count = z.union([z.string(), z.number()]).transform(Number);
const OldTransaction = z.object({
  pid: z.number().nullable(),
  gid: z.string().nullable(),
  age_ms: count,
  usename: z.string().nullable(),
  application_name: z.string().nullable(),
  state: z.string().nullable(),
  query: z.string().nullable(),
});
const DeadRows = z.object({ relname: z.string(), live: count, dead: count, last_vacuum: z.date().nullable() });
const IndexSizes = z.object({ relname: z.string(), table_bytes: count, index_bytes: count });

const minutes = (ms: number): string => `${(ms / 60_000).toFixed(1)} min`;
const megabytes = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** The conditions true now (no turn taken: any harness may ask). */
export async function findMaintenanceConditions(sql: postgres.Sql, limits: MaintenanceLimits): Promise<MaintenanceFinding[]> {
  const [transactions, dead, indexes] = await Promise.all([
    sql`
      SELECT pid, NULL::text AS gid, (extract(epoch FROM now() - xact_start) * 1000)::float8 AS age_ms, usename::text, application_name, state, left(query, 120) AS query
      FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)
        AND xact_start < now() - make_interval(secs => ${limits.oldTransactionMs / 1_000})
      UNION ALL
      SELECT NULL, gid, (extract(epoch FROM now() - prepared) * 1000)::float8, owner::text, NULL, 'prepared', NULL
      FROM pg_prepared_xacts WHERE database = current_database() AND prepared < now() - make_interval(secs => ${limits.oldTransactionMs / 1_000})
      ORDER BY 3 DESC LIMIT 5`,
    sql`
      SELECT relname::text, n_live_tup AS live, n_dead_tup AS dead, greatest(last_vacuum, last_autovacuum) AS last_vacuum
      FROM pg_stat_user_tables
      WHERE schemaname = current_schema() AND relname LIKE 'sw\\_%' AND n_dead_tup >= ${limits.minDeadRows}
        AND n_dead_tup > ${limits.deadRowsRatio} * greatest(n_live_tup, 1)
        AND coalesce(greatest(last_vacuum, last_autovacuum), '-infinity') < now() - make_interval(secs => ${limits.vacuumQuietMs / 1_000})`,
    sql`
      SELECT relname::text, pg_table_size(oid) AS table_bytes, pg_indexes_size(oid) AS index_bytes
      FROM pg_class
      WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace AND relname LIKE 'sw\\_%'
        AND pg_indexes_size(oid) >= ${limits.minIndexBytes} AND pg_indexes_size(oid) > ${limits.indexRatio} * pg_table_size(oid)`,
  ]);
  const findings: MaintenanceFinding[] = [];
  for (const raw of transactions) {
    const row = OldTransaction.parse(raw);
    const who =
      row.gid !== null ? `prepared transaction '${row.gid}'` : `pid ${row.pid}, user ${row.usename ?? '?'}, application '${row.application_name ?? ''}'`;
    findings.push({
      key: `transaction:${row.gid ?? row.pid}`,
      message:
        `PostgreSQL maintenance: a transaction open for ${minutes(row.age_ms)} (${who}, ${row.state ?? '?'}${row.query ? `: ${JSON.stringify(row.query)}` : ''}) ` +
        `holds back vacuum: no row the job store deletes or updates can be cleaned up while it lasts. End it (set idle_in_transaction_session_timeout for sessions left idle in a transaction).`,
    });
  }
  for (const raw of dead) {
    const row = DeadRows.parse(raw);
    findings.push({
      key: `dead:${row.relname}`,
      message:
        `PostgreSQL maintenance: ${row.relname} holds ${row.dead} dead rows for ${row.live} live ones and was last vacuumed ${row.last_vacuum ? row.last_vacuum.toISOString() : 'never'}: ` +
        `check that autovacuum runs (autovacuum = on, enough autovacuum_max_workers) and that no long transaction holds it back.`,
    });
  }
  for (const raw of indexes) {
    const row = IndexSizes.parse(raw);
    findings.push({
      key: `index:${row.relname}`,
      message:
        `PostgreSQL maintenance: the indexes of ${row.relname} weigh ${megabytes(row.index_bytes)} for a table of ${megabytes(row.table_bytes)} (more than ${limits.indexRatio}x): ` +
        `they keep pages of rows long gone; REINDEX TABLE CONCURRENTLY ${row.relname} gives them back.`,
    });
  }
  return findings;
}

export class MaintenanceCheck {
  readonly #sql: postgres.Sql;
  readonly #limits: MaintenanceLimits;
  readonly #warn: (message: string) => void;
  readonly #onError: (error: unknown) => void;
  readonly #clock: Clock;
  #timer: TimerHandle | undefined;
  /** The round under way (or the last one), settled: its errors went to onError. */
  #round: Promise<void> | undefined;

  constructor(sql: postgres.Sql, limits: MaintenanceLimits, warn: (message: string) => void, onError: (error: unknown) => void, clock: Clock = systemClock) {
    this.#sql = sql;
    this.#limits = limits;
    this.#warn = warn;
    this.#onError = onError;
    this.#clock = clock;
  }

  /** A round every `intervalMs`, when this harness's turn (the first after one interval). */
  start(): void {
    let running = false;
    this.#timer ??= repeatEvery(this.#clock, this.#limits.intervalMs, () => {
      if (running) return;
      running = true;
      this.#round = this.#takeTurn()
        .catch(this.#onError)
        .finally(() => (running = false));
    });
  }

  /** Settles when the round under way (if any) has. */
  async settled(): Promise<void> {
    await this.#round;
  }

  close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /**
   * Look now: warn of each condition not warned of before (by any harness: the keys
   * warned of and still true are kept in sw_maintenance); answers the new warnings.
   */
  async check(): Promise<MaintenanceFinding[]> {
    const findings = await findMaintenanceConditions(this.#sql, this.#limits);
    const [row] = await this.#sql<{ warned: string[] }[]>`SELECT warned FROM sw_maintenance`;
    const warned = new Set(row?.warned ?? []);
    const fresh = findings.filter((finding) => !warned.has(finding.key));
    await this.#sql`UPDATE sw_maintenance SET warned = ${this.#sql.array(findings.map((finding) => finding.key))}::text[]`;
    for (const finding of fresh) this.#warn(finding.message);
    return fresh;
  }

  /** Rebuild the indexes past the bound (index-rebuild.ts), each logged through `warn`; answers those rebuilt. */
  rebuildIndexes(): Promise<string[]> {
    return rebuildBloatedIndexes(this.#sql, this.#limits, this.#warn, this.#onError, this.#clock);
  }

  /** Check, then rebuild, when this harness wins the round (no other harness checked in the last interval). */
  async #takeTurn(): Promise<void> {
    const seconds = (this.#limits.intervalMs * 0.9) / 1_000;
    const won = await this.#sql`UPDATE sw_maintenance SET checked_at = now() WHERE checked_at < now() - make_interval(secs => ${seconds}) RETURNING checked_at`;
    if (won.length === 0) return;
    await this.check();
    await this.rebuildIndexes();
  }
}
