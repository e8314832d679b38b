/**
 * @module harness/postgres/database
 * One PostgreSQL handle per harness process: one postgres.js pool, sized by
 * `--pg-pool-size` (default 10), shared by every store of the process (the job store,
 * the management store, the launcher's slot claims), which are given it at
 * construction and never close it. The job store's LISTEN takes one connection more,
 * the driver's own (postgres.js opens it on the first `listen`), and the launcher's slot
 * claims one more, kept open as long as the process runs (session(): the session whose
 * end tells the other harnesses that this one is gone): a process holds at most
 * poolSize + 2 connections. Opening it creates or migrates the schema (migrate.ts), once;
 * whoever opened it closes it, once, after the stores on it are closed.
 *
 *     const database = await PostgresDatabase.open(url, { schema: HARNESS_SCHEMA });
 *     const jobs = await PostgresJobStore.open(database);
 *     …
 *     await jobs.close();
 *     await database.close();
 */
import postgres from 'postgres';
import type { SchemaPart } from './migration-files.js';
import { migrate, schemaVersions } from './migrate.js';

/** Connections in a process's pool when no size is given. */
export const DEFAULT_POOL_SIZE = 10;

/**
 * Longest wait between two connection attempts while the server is down, s. The driver's
 * own backoff grows to 20 s, and a request waits for the next attempt before it fails:
 * during an outage requests took 5 to 12 s to be answered 503 (issue 32). With 1 s they
 * are answered within about a second, and the pool is back within a second of the server.
 */
export const MAX_RECONNECT_BACKOFF_S = 1;

/**
 * Longest wait for a connection to be made, s (the driver's default is 30). postgres.js
 * 3.4.9 keeps a cancelled write timer when a connection closes with a small write pending
 * (a PostgreSQL restart under load does that): the connection's next startup message is
 * then never sent and the attempt waits out this timeout, and so does the request handed
 * to it (issue 49: /health came back 30.8 s after one restart of 100, most likely this). Each such
 * attempt adds to the unsent bytes until the driver sends them all (and the server refuses
 * that attempt, after which the connection is clean): about ten attempts. 10 s makes each
 * stall a third of the driver's default and is still ample for a TLS connection to a
 * remote server.
 */
export const CONNECT_TIMEOUT_S = 10;

/** The driver's backoff (3^retries / 100 s, jittered), capped at MAX_RECONNECT_BACKOFF_S. */
function reconnectBackoff(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, MAX_RECONNECT_BACKOFF_S);
}

/** `application_name` of the harness's connections (pg_stat_activity shows it). */
export const APPLICATION_NAME = 'serverless-worker harness';

/**
 * After the first connection has fetched the server's array types (the pool's options
 * keep them, for every connection), later connections do not fetch them again. Why (issue
 * 49 item 1): postgres.js 3.4.9 fetches them on every new connection, from a promise nothing
 * handles; when the server goes away during that fetch (connections reconnecting right
 * after a PostgreSQL restart) the rejection is unhandled and the process dies. `sql.options`
 * is the pool's parsed options, part of the driver's typed API; each connection reads
 * `fetch_types` when it connects.
 */
function stopRefetchingTypes(sql: postgres.Sql): void {
  sql.options.fetch_types = false;
}

export interface PostgresDatabaseOptions {
  /** The tables to create or migrate: each part's migration files (harness-schema.ts lists the harness's). */
  readonly schema: readonly SchemaPart[];
  /** Connections in the pool (the LISTEN connection is one more); default 10. */
  readonly poolSize?: number;
  /** `application_name` of the connections; default 'serverless-worker harness'. */
  readonly applicationName?: string;
}

export class PostgresDatabase {
  /** The pool: stores run their statements and transactions on it. */
  readonly sql: postgres.Sql;
  /** Connections in the pool. */
  readonly poolSize: number;
  /** The schema versions this open applied (none when the database was up to date). */
  readonly applied: readonly number[];
  readonly #openSession: () => postgres.Sql;
  #session: postgres.Sql | undefined;
  #closed: Promise<void> | undefined;

  private constructor(sql: postgres.Sql, poolSize: number, applied: readonly number[], openSession: () => postgres.Sql) {
    this.sql = sql;
    this.poolSize = poolSize;
    this.applied = applied;
    this.#openSession = openSession;
  }

  /**
   * One connection of its own, outside the pool, for what lasts as long as the process:
   * the launcher's presence lock (launcher/slot-holder.ts). Made on the first call (the
   * driver connects on the first statement, and again after a lost connection), never
   * closed for idleness or age; closed with the handle.
   */
  session(): postgres.Sql {
    if (this.#closed) throw new Error('session() of a closed PostgreSQL handle');
    this.#session ??= this.#openSession();
    return this.#session;
  }

  /** Connect to `url` and create or migrate the schema; the driver's error when it cannot. */
  static async open(url: string, options: PostgresDatabaseOptions): Promise<PostgresDatabase> {
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    if (!Number.isInteger(poolSize) || poolSize < 1) throw new RangeError(`poolSize must be a whole number of at least 1, got ${poolSize}`);
    const versions = await schemaVersions(options.schema);
    const connect = (settings: postgres.Options<Record<string, postgres.PostgresType>>): postgres.Sql =>
      postgres(url, {
        onnotice: () => undefined,
        backoff: reconnectBackoff,
        connect_timeout: CONNECT_TIMEOUT_S,
        transform: { undefined: null },
        connection: { application_name: options.applicationName ?? APPLICATION_NAME },
        ...settings,
      });
    const sql = connect({ max: poolSize });
    try {
      const applied = await migrate(sql, versions);
      stopRefetchingTypes(sql);
      // The session: never closed for idleness or age (the pool's connections are, after 30 to 60 min), so its end means the process's.
      return new PostgresDatabase(sql, poolSize, applied, () => connect({ max: 1, idle_timeout: 0, max_lifetime: null, fetch_types: false }));
    } catch (error) {
      await sql.end({ timeout: 1 });
      throw error;
    }
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** End every connection (the LISTEN one too); later calls answer the first one's promise. */
  close(): Promise<void> {
    this.#closed ??= Promise.all([this.sql.end({ timeout: 5 }), this.#session?.end({ timeout: 5 })]).then(() => undefined);
    return this.#closed;
  }
}
