/**
 * What a database was asked, read from PostgreSQL's own statistics rather than from a proxy on
 * the wire (a proxy in the measured process costs it CPU and a hop a statement): statements,
 * pg_stat_statements' top-level calls (the server loaded with it: PG_STAT_STATEMENTS_SETTINGS)
 * but for foreign-key checks, so the round trips; foreign-key checks apart (PostgreSQL's own
 * `SELECT 1 FROM ONLY <table> x WHERE ... FOR KEY SHARE OF x` for each row written that
 * references another table: one that is DEFERRABLE INITIALLY DEFERRED, as pg-boss's job to
 * queue key, runs at the commit and is counted as a top-level statement, though the client
 * never sent it); nested statements, those run inside a statement (`pg_stat_statements.track =
 * all`); and transactions, pg_stat_database's commits and rollbacks.
 */
import type postgres from 'postgres';

/** The embedded server's settings for `counts` (the extension made by `CREATE EXTENSION` in each database's server once). */
export const PG_STAT_STATEMENTS_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.max=10000', 'pg_stat_statements.track=all'];

/** pg_stat_statements' text of PostgreSQL's foreign-key check (ri_triggers.c), its parameters numbered. */
const FOREIGN_KEY_CHECK = String.raw`^SELECT \$[0-9]+ FROM ONLY .* FOR KEY SHARE OF x$`;

export interface StatementCounts {
  /** Top-level statements but foreign-key checks: the round trips. */
  readonly statements: number;
  readonly foreignKeyChecks: number;
  readonly nested: number;
  readonly transactions: number;
}

/** Statements (round trips), foreign-key checks, nested statements and transactions so far in `database`. */
export async function counts(admin: postgres.Sql, database: string): Promise<StatementCounts> {
  await admin`SELECT pg_stat_clear_snapshot()`;
  const [row] = await admin<{ statements: string | null; checks: string | null; nested: string | null; transactions: string }[]>`
    WITH s AS (SELECT s.calls, s.toplevel, s.query ~ ${FOREIGN_KEY_CHECK} AS fk FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${database})
    SELECT (SELECT sum(calls) FILTER (WHERE toplevel AND NOT fk) FROM s)::text AS statements,
      (SELECT sum(calls) FILTER (WHERE fk) FROM s)::text AS checks,
      (SELECT sum(calls) FILTER (WHERE NOT toplevel AND NOT fk) FROM s)::text AS nested,
      (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = ${database})::text AS transactions`;
  return {
    statements: Number(row?.statements ?? 0),
    foreignKeyChecks: Number(row?.checks ?? 0),
    nested: Number(row?.nested ?? 0),
    transactions: Number(row?.transactions ?? 0),
  };
}

/** Wait until no session is connected to `database` (each one's statistics are then in pg_stat_database). */
export async function sessionsGone(admin: postgres.Sql, database: string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const [row] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database}`;
    if (row?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
