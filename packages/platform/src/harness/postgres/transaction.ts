/**
 * @module harness/postgres/transaction
 * The harness's transactions: postgres.js's `sql.begin`, kept from writing to a connection
 * that has closed. Why (issue 49 item 1): postgres.js 3.4.9 (the newest release) batches
 * small writes behind a `setImmediate` and, once a connection's socket has closed, sets it
 * to null; a statement written to such a connection later throws `TypeError: Cannot read
 * properties of null (reading 'write')` from that timer, where nothing can catch it, and
 * the process dies (porsager/postgres #1154, #1066, #1208; fixes proposed in #1168, #1176,
 * #1209, none released). The pool never writes to a closed connection; `sql.begin` does:
 * when the work of a transaction fails, it sends ROLLBACK on the transaction's connection,
 * also when the work failed because that connection was lost. A PostgreSQL restart under
 * load killed the harness that way on most restarts.
 *
 * Here, when the work fails for a lost connection (harness/postgres/unavailable.ts: the
 * driver's connection codes, socket errors, the server's fatal shutdown states, all of
 * which end the connection), `sql.begin` is not told: it then sends neither ROLLBACK nor
 * COMMIT (the server ended the transaction with the session), and rejects on its own with
 * the connection's close (it races the work against it). Any other failure is rethrown and
 * rolled back as before. Everything else `sql.begin` does stays (it hands the connection
 * back to the pool, and nothing is written before the connection answered the statement
 * before: the work must only wait on statements of `tx`, no timers or other I/O, which
 * every transaction of the harness does).
 *
 * Why not `sql.reserve()` and our own BEGIN/COMMIT: a reserve whose connection fails to
 * connect stays queued in 3.4.9, and takes the next connection that opens for good; a pool
 * lost its connections that way over a few restarts. Why not a patched driver: a patch
 * applied at install reaches this repository only, not the users of the published package.
 */
import type postgres from 'postgres';
import { databaseUnavailable } from './unavailable.js';

/** The connection a transaction's statements run on. */
export type TransactionSql = postgres.TransactionSql;

/** Never settles: `sql.begin` rejects with the connection's close instead. */
const UNTIL_CLOSED = (): Promise<never> => new Promise<never>(() => undefined);

/** Run `work` in one transaction: committed when it resolves, rolled back when it throws (the error is rethrown). */
export async function transaction<T>(sql: postgres.Sql, work: (tx: TransactionSql) => Promise<T>): Promise<T> {
  const done = await sql.begin((tx) =>
    work(tx).catch((error: unknown) => {
      if (databaseUnavailable(error) !== undefined) return UNTIL_CLOSED();
      throw error;
    }),
  );
  return done as T;
}
