/**
 * @module harness/store/postgres/index-rebuild
 * The maintenance round's rebuild of the store's bloated indexes (issue 33: after 50 000
 * jobs and their cleanup, sw_jobs's table gave its pages back but its indexes kept 15
 * MB; a B-tree keeps the pages of entries long deleted, and only a rebuild returns them).
 *
 * An index of a `sw_*` table is rebuilt with `REINDEX INDEX CONCURRENTLY` (it neither
 * blocks the takes, submissions and results that write the table meanwhile nor runs in
 * a transaction: one statement of its own) when it weighs at least `reindexMinBytes` and
 * more than `reindexRatio` times what its table's live rows need: `reindexBytesPerRow`
 * a row (an entry of our widest key, an endpoint id and a job id with the tuple and line
 * pointer overheads, is under 200 bytes; 256 leaves room for a fill factor and for a
 * partial index counted as if every row were in it) plus a page (the meta page). The
 * estimate errs high, so a rebuilt index is far under the bound and is not rebuilt again
 * at the next round: an empty table's index is rebuilt past 4 x 8 KB = 32 KB, and comes
 * back at 8-16 KB. Below `reindexMinBytes` (32 KB, 4 pages) nothing is rebuilt. A
 * rebuild of such an index takes milliseconds (1-4 MB indexes took 3-46 ms at load 4-9,
 * bench/README). After 50 000 jobs and their cleanup the seven indexes of sw_jobs weighed
 * 9.7 MB for an empty table: with a 1 MB floor three (0.3 MB each) were left (9-15x the
 * empty table's size), with 64 KB and two pages one (2.5x). Each rebuild is one log line. It runs in the
 * maintenance round (maintenance-check.ts): one harness a round, a round every
 * `intervalMs`, so each index is rebuilt at most once an interval.
 *
 * Job tables a cleanup left empty are truncated by the store itself (job-table-vacuum.ts),
 * which gives their indexes back at once; this rebuild is for the indexes of tables that
 * still hold jobs, or that another session held when they were found empty.
 *
 * A rebuild that fails (cancelled, a deadlock, the connection lost) leaves an invalid
 * copy, `<index>_ccnew`: it is dropped (`DROP INDEX CONCURRENTLY`), and the next round
 * tries again.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import { type Clock, systemClock } from 'serverless-worker/internal';

export interface IndexRebuildLimits {
  /** An index is rebuilt once it weighs this many bytes at least... */
  readonly reindexMinBytes: number;
  /** ...and more than this many times what its table's live rows need... */
  readonly reindexRatio: number;
  /** ...counted as this many bytes a live row (plus a page). */
  readonly reindexBytesPerRow: number;
}

export const INDEX_REBUILD_LIMITS: IndexRebuildLimits = { reindexMinBytes: 32 << 10, reindexRatio: 4, reindexBytesPerRow: 256 };

const count = z.union([z.string(), z.number()]).transform(Number);
const Bloated = z.object({ index: z.string(), table: z.string(), index_bytes: count, live_rows: count });
const Size = z.object({ bytes: count });

const megabytes = (bytes: number): string => `${(bytes / 1_048_576).toFixed(2)} MB`;

/** The indexes of the store's tables past the bound, the largest first. */
export async function findBloatedIndexes(sql: postgres.Sql, limits: IndexRebuildLimits): Promise<z.infer<typeof Bloated>[]> {
  const rows = await sql`
    SELECT i.relname::text AS index, t.relname::text AS table, pg_relation_size(i.oid) AS index_bytes,
      greatest(coalesce(s.n_live_tup, 0), t.reltuples, 0)::bigint AS live_rows
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class t ON t.oid = x.indrelid
    LEFT JOIN pg_stat_user_tables s ON s.relid = t.oid
    WHERE t.relnamespace = current_schema()::regnamespace AND t.relname LIKE 'sw\\_%' AND x.indisvalid
      AND pg_relation_size(i.oid) >= ${limits.reindexMinBytes}
      AND pg_relation_size(i.oid) > ${limits.reindexRatio} * (greatest(coalesce(s.n_live_tup, 0), t.reltuples, 0) * ${limits.reindexBytesPerRow} + current_setting('block_size')::int)
    ORDER BY pg_relation_size(i.oid) DESC`;
  return rows.map((row) => Bloated.parse(row));
}

/** Rebuild each index past the bound, one after the other; answers the indexes rebuilt. Errors go to `onError` (the next index is still tried). */
export async function rebuildBloatedIndexes(
  sql: postgres.Sql,
  limits: IndexRebuildLimits,
  log: (message: string) => void,
  onError: (error: unknown) => void,
  clock: Clock = systemClock,
): Promise<string[]> {
  const rebuilt: string[] = [];
  const tables = new Set<string>();
  for (const bloated of await findBloatedIndexes(sql, limits)) {
    const name = sql(bloated.index);
    const began = clock.now();
    try {
      // Its own statement, outside any transaction (REINDEX CONCURRENTLY refuses one).
      await sql`REINDEX INDEX CONCURRENTLY ${name}`;
    } catch (error) {
      onError(error);
      await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql(`${bloated.index}_ccnew`)}`.catch(onError);
      continue;
    }
    const [row] = await sql`SELECT pg_relation_size(${bloated.index}::regclass) AS bytes`;
    const after = row ? Size.parse(row).bytes : 0;
    log(
      `PostgreSQL maintenance: rebuilt index ${bloated.index} of ${bloated.table} (REINDEX INDEX CONCURRENTLY, ${(clock.now() - began).toFixed(0)} ms): ` +
        `${megabytes(bloated.index_bytes)} -> ${megabytes(after)} for ${bloated.live_rows} live rows`,
    );
    rebuilt.push(bloated.index);
    tables.add(bloated.table);
  }
  // The rebuild invalidated every plan cached on the table, and the next ones are made now, while it is
  // nearly empty: with its statistics fresh (fresh-statistics.ts, which analyzes again as it grows),
  // not with the counts of the full table the cleanup emptied.
  for (const table of tables) await sql`ANALYZE ${sql(table)}`.catch(onError);
  return rebuilt;
}
