/**
 * @module harness/store/postgres/job-table-vacuum
 * The job tables (sw_jobs, sw_chunks) kept small by the store itself (issue 47, item 4):
 * a queue's indexes keep the pages of ended and deleted jobs. A B-tree gets a page back
 * for reuse only through a VACUUM, and gives its files back only through a rebuild or a
 * TRUNCATE (bench/README.md, "Issue 47 item 4"). Autovacuum looks at a table at most once
 * a minute, and a drain of 50 000 jobs takes less: its indexes grew to about 10 MB, for a
 * start of 0.05 MB, and kept that size after the cleanup.
 *
 * - **A VACUUM every `vacuumEveryJobs` jobs** (1 000) this process ended or deleted:
 *   `VACUUM (SKIP_LOCKED, TRUNCATE false) sw_jobs, sw_chunks`, a statement of its own
 *   (never in a transaction), in the background (the call that counted the job does not
 *   wait). A table that another session is vacuuming (another harness, autovacuum) or
 *   holds exclusively is skipped, never waited for, so harnesses sharing the database
 *   vacuum one at a time. It takes a lock that takes, submissions and results do not
 *   wait for (SHARE UPDATE EXCLUSIVE), and not the one that giving back the table's last
 *   pages would (`TRUNCATE false`). The bench measured 6-81 ms each.
 * - **A TRUNCATE of the job tables a cleanup left empty**, with nothing lost: asked for
 *   when the store's next deadline is none (nextDueAt: every job has a ttl, so no
 *   deadline means no job; the scheduler asks it after each sweep) and this process
 *   deleted jobs since the last try. One short READ COMMITTED transaction:
 *   `LOCK TABLE sw_jobs, sw_chunks IN ACCESS EXCLUSIVE MODE NOWAIT` (any other
 *   transaction that touched either table, a submission not yet committed included,
 *   makes it fail at once: skipped, never waited for, and tried again the next time the
 *   store finds no job), then both tables are counted again under the lock with a
 *   snapshot taken after it (every committed row seen), and only when both are empty
 *   `TRUNCATE sw_jobs, sw_chunks` (the identities continue: job and chunk order is kept). Statements of other sessions wait for the lock a few
 *   milliseconds at most (four round trips). A truncated table's indexes start again
 *   from one page each; the table is then analyzed (`onTruncated`: fresh-statistics.ts),
 *   so that the plans made next are for an empty table that grows.
 *
 * One piece of work at a time; what is asked meanwhile runs after it. Errors go to
 * `onError` (the store goes on; the next count tries again). Prepared statements of
 * every session are planned again after a TRUNCATE or a VACUUM that changed the table's
 * counts, as after an ANALYZE.
 */
import postgres from 'postgres';
import { transaction } from '../../postgres/transaction.js';

export interface JobTableLimits {
  /** Jobs ended or deleted by this process between two VACUUMs of the job tables; 0: none (autovacuum only). Default 1 000. */
  readonly vacuumEveryJobs: number;
  /** Whether job tables a cleanup left empty are truncated (their indexes back to one page). Default true. */
  readonly truncateWhenEmpty: boolean;
}

export const JOB_TABLE_LIMITS: JobTableLimits = { vacuumEveryJobs: 1_000, truncateWhenEmpty: true };

/** PostgreSQL's lock_not_available: LOCK … NOWAIT found the table held. */
const LOCK_NOT_AVAILABLE = '55P03';

/** What a try at truncating found: done, rows in a table, or a table held by another session. */
export type TruncateOutcome = 'truncated' | 'not-empty' | 'held';

/** TRUNCATE sw_jobs and sw_chunks when both are empty, under `LOCK … NOWAIT` (see the module's comment). */
export async function truncateEmptyJobTables(sql: postgres.Sql): Promise<TruncateOutcome> {
  try {
    return await transaction(sql, async (tx) => {
      // Each statement's snapshot after the lock: every row committed before it is counted.
      await tx`SET TRANSACTION ISOLATION LEVEL READ COMMITTED`;
      await tx`LOCK TABLE sw_jobs, sw_chunks IN ACCESS EXCLUSIVE MODE NOWAIT`;
      const [row] = await tx<{ empty: boolean }[]>`SELECT NOT EXISTS (SELECT 1 FROM sw_jobs) AND NOT EXISTS (SELECT 1 FROM sw_chunks) AS empty`;
      if (row?.empty !== true) return 'not-empty';
      await tx`TRUNCATE sw_jobs, sw_chunks`;
      return 'truncated';
    });
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.code === LOCK_NOT_AVAILABLE) return 'held';
    throw error;
  }
}

/**
 * VACUUM the job tables, skipping one another session vacuums or holds (never waiting for
 * it), and leaving the table's empty last pages in place (`TRUNCATE false`): giving them
 * back takes an ACCESS EXCLUSIVE lock, which the takes, submissions and results would wait
 * for. Later jobs reuse those pages; autovacuum and the TRUNCATE of empty tables give them
 * back.
 */
export async function vacuumJobTables(sql: postgres.Sql): Promise<void> {
  await sql`VACUUM (SKIP_LOCKED, TRUNCATE false) sw_jobs, sw_chunks`;
}

type Work = 'vacuum' | 'truncate';

export class JobTableVacuum {
  readonly #sql: postgres.Sql;
  readonly #limits: JobTableLimits;
  readonly #onError: (error: unknown) => void;
  readonly #onTruncated: () => Promise<unknown>;
  /** Jobs ended or deleted since the last VACUUM was asked for. */
  #gone = 0;
  /** Jobs deleted since the last TRUNCATE was asked for. */
  #deleted = false;
  readonly #asked = new Set<Work>();
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(sql: postgres.Sql, onError: (error: unknown) => void, onTruncated: () => Promise<unknown>, limits: JobTableLimits = JOB_TABLE_LIMITS) {
    this.#sql = sql;
    this.#limits = limits;
    this.#onError = onError;
    this.#onTruncated = onTruncated;
  }

  /** This process ended `ended` jobs and deleted `deleted`: a VACUUM once `vacuumEveryJobs` are counted. */
  jobsGone(ended: number, deleted: number): void {
    if (deleted > 0) this.#deleted = true;
    if (this.#limits.vacuumEveryJobs <= 0) return;
    this.#gone += ended + deleted;
    if (this.#gone < this.#limits.vacuumEveryJobs) return;
    this.#gone = 0;
    this.#ask('vacuum');
  }

  /**
   * The store found no job (nextDueAt answered none): the tables are truncated if this
   * process deleted jobs since the last try (or that try found them held) and they are
   * still empty.
   */
  seenEmpty(): void {
    if (!this.#limits.truncateWhenEmpty || !this.#deleted) return;
    this.#deleted = false;
    this.#ask('truncate');
  }

  /** Settles when the work asked for so far is done (its errors went to onError). */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** No more work starts; settles when the work under way is done. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.settled();
  }

  #ask(work: Work): void {
    if (this.#closed) return;
    this.#asked.add(work);
    this.#start();
  }

  /** Drain what is asked, unless a drain is under way (it starts the next one: what was asked after its last look). */
  #start(): void {
    if (this.#running || this.#asked.size === 0 || this.#closed) return;
    const run = this.#drain();
    this.#running = run;
    void run.then(() => {
      this.#running = undefined;
      this.#start();
    });
  }

  /** The work asked for, one at a time, until none is left: a TRUNCATE first (a truncated table needs no VACUUM). Never rejects. */
  async #drain(): Promise<void> {
    while (this.#asked.size > 0 && !this.#closed) {
      const truncate = this.#asked.delete('truncate');
      const vacuum = this.#asked.delete('vacuum');
      try {
        const outcome = truncate ? await truncateEmptyJobTables(this.#sql) : undefined;
        // Held by another session: tried again the next time the store finds no job.
        if (outcome === 'held') this.#deleted = true;
        if (outcome === 'truncated') {
          await this.#onTruncated();
          continue;
        }
        if (vacuum) await vacuumJobTables(this.#sql);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
