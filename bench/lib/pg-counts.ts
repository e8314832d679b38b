/**
 * What a database was asked, read from PostgreSQL's own statistics rather than from a proxy on
 * the wire (a proxy in the measured process costs it CPU and a hop a statement): statements,
 * pg_stat_statements' top-level calls (the server loaded with it: PG_STAT_STATEMENTS_SETTINGS),
 * and transactions, pg_stat_database's commits and rollbacks.
 */
import type postgres from 'postgres';

/** The embedded server's settings for `counts` (the extension made by `CREATE EXTENSION` in each database's server once). */
export const PG_STAT_STATEMENTS_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.max=10000', 'pg_stat_statements.track=all'];

/** Statements (top-level calls: round trips), nested statements and transactions so far in `database`. */
export async function counts(admin: postgres.Sql, database: string): Promise<{ statements: number; nested: number; transactions: number }> {
  await admin`SELECT pg_stat_clear_snapshot()`;
  const [row] = await admin<{ statements: string | null; nested: string | null; transactions: string }[]>`
    SELECT (SELECT sum(calls) FILTER (WHERE s.toplevel) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${database})::text AS statements,
      (SELECT sum(calls) FILTER (WHERE NOT s.toplevel) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = ${database})::text AS nested,
      (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = ${database})::text AS transactions`;
  return { statements: Number(row?.statements ?? 0), nested: Number(row?.nested ?? 0), transactions: Number(row?.transactions ?? 0) };
}

/** Wait until no session is connected to `database` (each one's statistics are then in pg_stat_database). */
export async function sessionsGone(admin: postgres.Sql, database: string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const [row] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${database}`;
    if (row?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
