/**
 * @module harness/store/postgres/fresh-statistics
 * sw_jobs's planner statistics kept fresh as the table grows (issue 47, item 3).
 * postgres.js prepares each statement, and PostgreSQL keeps the generic plan it makes on
 * a statement's sixth run until something invalidates it: DDL, or new statistics for the
 * table (ANALYZE, or a VACUUM that updates its page and row counts). A plan made while the
 * table held a handful of rows (a new database, or the empty table a cleanup and an index
 * rebuild leave) is a plan for a handful of rows: sequential scans and joins that read
 * every row. As the table grew, the take and the result statement slowed with it
 * (6.5 -> 22 ms a take and 9 -> 28 ms a result over the first 20 000 jobs after a
 * rebuild) until autovacuum analyzed the table, whose thresholds and one-minute naptime
 * let the table grow far first.
 *
 * So the store analyzes sw_jobs itself: when the table is past `growthRatio` times the
 * pages its statistics last counted (the file's size, exact at once, against pg_class's
 * relpages), looked at every `checkEveryRows` rows this process inserts; and on demand
 * (the maintenance round after an index rebuild, index-rebuild.ts). The growth steps are
 * geometric: a table that reaches 50 000 jobs from empty is analyzed about six times, each
 * an ANALYZE of at most its 30 000-row sample (milliseconds at these sizes). The ANALYZE
 * invalidates every plan cached on the table, and the next ones are made for its size.
 * One check or ANALYZE at a time; a failure goes to `onError` (the store goes on: the
 * next check tries again).
 */
import type postgres from 'postgres';
import * as z from 'zod';

export interface StatisticsLimits {
  /** Rows this process inserts between two looks at the table's size. */
  readonly checkEveryRows: number;
  /** The table is analyzed once its pages reach this many times the pages its statistics counted... */
  readonly growthRatio: number;
  /** ...counted as this many at least (a table analyzed empty is analyzed again at growthRatio x minPages). */
  readonly minPages: number;
}

export const STATISTICS_LIMITS: StatisticsLimits = { checkEveryRows: 200, growthRatio: 4, minPages: 2 };

const count = z.union([z.string(), z.number()]).transform(Number);
const Sizes = z.object({ pages: count, counted_pages: count, counted_rows: count });

export class FreshStatistics {
  // Used only as a template tag below (this.#sql`...`), which oxlint 1.95 does not count as a use.
  // oxlint-disable-next-line no-unused-private-class-members
  readonly #sql: postgres.Sql;
  readonly #limits: StatisticsLimits;
  readonly #onError: (error: unknown) => void;
  /** Rows inserted since the last look. */
  #inserted = 0;
  #running: Promise<void> | undefined;

  constructor(sql: postgres.Sql, onError: (error: unknown) => void, limits: StatisticsLimits = STATISTICS_LIMITS) {
    this.#sql = sql;
    this.#limits = limits;
    this.#onError = onError;
  }

  /** This process inserted `rows` jobs: past `checkEveryRows` since the last look, the table is looked at (in the background). */
  inserted(rows: number): void {
    this.#inserted += rows;
    if (this.#inserted < this.#limits.checkEveryRows || this.#running) return;
    this.#inserted = 0;
    void this.check();
  }

  /** Look at the table now: analyze it when it has no statistics yet or grew past the ratio. Answers whether it was analyzed. */
  check(): Promise<boolean> {
    return this.#once(async () => {
      const [row] = await this.#sql`
        SELECT pg_relation_size(c.oid) / current_setting('block_size')::int AS pages, c.relpages AS counted_pages, c.reltuples AS counted_rows
        FROM pg_class c WHERE c.oid = 'sw_jobs'::regclass`;
      if (!row) return false;
      const sizes = Sizes.parse(row);
      // reltuples -1: never analyzed nor vacuumed (a new database).
      const stale = sizes.counted_rows < 0 || sizes.pages >= this.#limits.growthRatio * Math.max(sizes.counted_pages, this.#limits.minPages);
      if (stale) await this.#analyze();
      return stale;
    });
  }

  /** Analyze the table now (its indexes were rebuilt, or its plans are otherwise due to be made again). */
  analyze(): Promise<boolean> {
    return this.#once(async () => {
      await this.#analyze();
      return true;
    });
  }

  async #analyze(): Promise<void> {
    await this.#sql`ANALYZE sw_jobs`;
  }

  /** `work`, after the look or ANALYZE in flight; its failure goes to onError (answered false). */
  async #once(work: () => Promise<boolean>): Promise<boolean> {
    while (this.#running) await this.#running;
    const run = work().catch((error: unknown) => {
      this.#onError(error);
      return false;
    });
    this.#running = run.then(() => undefined);
    try {
      return await run;
    } finally {
      this.#running = undefined;
    }
  }
}
