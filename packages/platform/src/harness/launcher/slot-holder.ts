/**
 * @module harness/launcher/slot-holder
 * Whether the harness holding a worker slot still runs, as PostgreSQL sees it. Each
 * harness keeps, on a connection of its own (PostgresDatabase.session()), a session-level
 * advisory lock keyed by that session's backend pid, and records the session (pid and
 * start) on every slot it claims or renews. The server ends the session, and with it the
 * lock, when the process dies (SIGKILL, a crash: the kernel closes its socket), so a slot
 * whose recorded session holds no lock any more is provably free, lease or not: the next
 * harness takes it at once instead of waiting out the lease (15 s).
 *
 * Never a live holder's: the proof needs the session to have started after the server
 * did (after a PostgreSQL restart every session is gone, a live harness's too, until its
 * next renew records its new one: such rows wait for their lease as before), and a row
 * without a session (an older harness's, or one whose session could not be made) has
 * only its lease. A live harness loses its slots this way only if the server ends its
 * session while both run (pg_terminate_backend, a network cut the server notices), as it
 * does when it stops renewing for a lease.
 */
import type postgres from 'postgres';
import * as z from 'zod';

/** First key of the presence locks (`'swls'`); the second is the holder session's backend pid. */
export const HOLDER_LOCK_SPACE = 0x73776c73;

/** The presence session a slot names: its backend pid and start (the server's time, as text: to the microsecond). */
export interface HolderSession {
  readonly pid: number;
  readonly started: string;
}

const SessionRow = z.object({ pid: z.number().int(), started: z.string(), locked: z.boolean() });

/**
 * This harness's presence session: made on the first call and, after a lost connection,
 * on the next (the driver reconnects; the lock is taken in the new session). Answers
 * undefined when the session cannot be had (the server is down): slots claimed meanwhile
 * carry no session, and so only their lease.
 */
export async function currentHolderSession(session: postgres.Sql): Promise<HolderSession | undefined> {
  try {
    // One statement: the pid, and the lock taken in the session that pid names (re-taken only when not held: each take stacks).
    const rows = await session`
      SELECT pg_backend_pid() AS pid,
        (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS started,
        CASE WHEN EXISTS (
          SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND classid = ${HOLDER_LOCK_SPACE}::oid
            AND objid = pg_backend_pid()::oid AND objsubid = 2 AND granted
        ) THEN true ELSE pg_try_advisory_lock(${HOLDER_LOCK_SPACE}, pg_backend_pid()) END AS locked`;
    const row = SessionRow.parse(rows[0]);
    return row.locked ? { pid: row.pid, started: row.started } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * SQL: whether the slot row `row` (a table name or alias) is held: its lease runs at
 * `now` and its holder's session is not provably gone.
 */
export function slotHeld(sql: postgres.Sql, row: string, now: number): postgres.Fragment {
  const slot = sql(row);
  return sql`(${slot}.lease_expires_at > ${now} AND NOT (
    ${slot}.holder_pid IS NOT NULL AND ${slot}.holder_started > pg_postmaster_start_time()
    AND NOT EXISTS (
      SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.classid = ${HOLDER_LOCK_SPACE}::oid
        AND l.objid = ${slot}.holder_pid::oid AND l.objsubid = 2 AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    )
  ))`;
}
