/**
 * @module harness/open-store
 * Which job store a harness uses, from `--store`, the `SW_HARNESS_STORE` environment
 * variable, or the `store` option of createHarnessServer: `memory` (the default: jobs
 * live in this process and die with it) or a PostgreSQL connection string
 * (`postgres://user:password@host:5432/database`, `postgresql://…` too): jobs survive a
 * restart and several harness processes on one database share the queue. On PostgreSQL
 * the process's one database handle is opened here (harness/postgres/database.ts) and
 * answered with the store, for the other stores of the process (management, launcher).
 */
import * as z from 'zod';
import { type JobStore, MemoryJobStore, parseOrThrow, ServerlessWorkerError, systemClock } from 'serverless-worker/internal';
import type { PostgresDatabase } from './postgres/database.js';

/** The environment variable that names the store when `--store` does not. */
export const STORE_ENV = 'SW_HARNESS_STORE';

/**
 * libpq's SSL modes, which postgres.js takes in `sslmode` (verify-ca is checked as
 * verify-full). Any other value used to be taken silently as "TLS, verified" (issue 49 item 8).
 */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/**
 * The refusal of a connection string's `sslmode`, or undefined when it has none or a known
 * one. Checked apart from StoreSpecSchema, whose refusals quote the value: the string
 * holds the password.
 */
export function sslModeProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // the driver reads what URL cannot (several hosts): it says what is wrong itself
  }
  const modes = url.searchParams.getAll('sslmode');
  const unknown = modes.find((mode) => !(SSL_MODES as readonly string[]).includes(mode));
  if (unknown === undefined) return undefined;
  return `sslmode=${unknown} in the PostgreSQL connection string is not an SSL mode: use one of ${SSL_MODES.join(', ')}`;
}

export const StoreSpecSchema = z
  .string()
  .trim()
  .refine((value) => value === 'memory' || /^postgres(ql)?:\/\/.+/.test(value), {
    error: 'the job store must be "memory" or a PostgreSQL connection string such as postgres://user:password@host:5432/database',
  });

/** What a store spec names, with any password hidden (for logs and banners). */
export function describeStoreSpec(spec: string): string {
  if (spec === 'memory') return 'memory (jobs are lost when this process ends)';
  try {
    const url = new URL(spec);
    if (url.password) url.password = '***';
    return `postgres ${url.host}${url.pathname}`;
  } catch {
    return 'postgres';
  }
}

/** Connections in a PostgreSQL store's pool (`--pg-pool-size`): 1 to 1000. */
export const PoolSizeSchema = z.number().int().min(1).max(1_000);

export interface OpenStoreOptions {
  /** Errors of a shared store's background work (its LISTEN connection); default ignored. */
  readonly onError?: (error: unknown) => void;
  /** Connections in the PostgreSQL pool of the process (LISTEN takes one more); default 10. Unused for memory. */
  readonly poolSize?: number;
  /**
   * The clock the harness runs on, measured against PostgreSQL's (a shared store refuses
   * a clock more than 2 s off: deadlines are shared); default the system clock. Null: not
   * measured (a harness on a clock of its own, tests). Unused for memory.
   */
  readonly clock?: { now(): number } | null;
  /**
   * Warnings about the database's upkeep (store/postgres/maintenance-check.ts: vacuum
   * held back, dead rows piling up, bloated indexes), once per condition; given, the
   * check runs every few minutes. Unused for memory.
   */
  readonly onWarning?: (message: string) => void;
}

export interface OpenedJobStore {
  readonly store: JobStore;
  /**
   * The process's PostgreSQL handle the store runs on, for its other stores (management,
   * launcher slots); undefined for memory. Its opener closes it after the stores on it.
   */
  readonly database: PostgresDatabase | undefined;
}

/** Open the store `spec` names (validated: SW_INVALID_OPTIONS names what was wrong), and on PostgreSQL the database handle under it. */
export async function openJobStore(spec: string, options: OpenStoreOptions = {}): Promise<OpenedJobStore> {
  const valid = parseOrThrow(StoreSpecSchema, spec, 'SW_INVALID_OPTIONS', 'store');
  const sslMode = valid === 'memory' ? undefined : sslModeProblem(valid);
  if (sslMode !== undefined) throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `Invalid store: ${sslMode}`, { allowed: [...SSL_MODES] });
  const poolSize = options.poolSize === undefined ? undefined : parseOrThrow(PoolSizeSchema, options.poolSize, 'SW_INVALID_OPTIONS', 'PostgreSQL pool size');
  if (valid === 'memory') return { store: new MemoryJobStore(), database: undefined };
  // Loaded only when asked for: a harness on the in-memory store never loads the driver.
  const [{ openHarnessDatabase }, { PostgresJobStore }] = await Promise.all([
    import('./harness-database.js'),
    import('./store/postgres/postgres-job-store.js'),
  ]);
  let database: PostgresDatabase | undefined;
  try {
    database = await openHarnessDatabase(valid, poolSize !== undefined ? { poolSize } : {});
    const clock = options.clock === undefined ? systemClock : options.clock;
    return {
      store: await PostgresJobStore.open(database, {
        ...(options.onError ? { onError: options.onError } : {}),
        ...(clock ? { clock } : {}),
        ...(options.onWarning ? { maintenance: { warn: options.onWarning } } : {}),
      }),
      database,
    };
  } catch (error) {
    await database?.close();
    // A clock too far from the database's says so itself (one line: clock-skew.ts).
    if (error instanceof ServerlessWorkerError)
      throw new ServerlessWorkerError(error.code, `Could not open the job store ${describeStoreSpec(valid)}: ${error.message}`, error.details);
    throw storeUnavailable(valid, error);
  }
}

/**
 * SW_STORE_UNAVAILABLE naming the store (host, port, database; never the password) and
 * the driver's reason. The driver's error is not kept as the cause: its fields may carry
 * the connection options.
 */
export function storeUnavailable(spec: string, error: unknown): ServerlessWorkerError {
  const failure = error as { message?: unknown; code?: unknown } | null;
  let password = '';
  try {
    password = decodeURIComponent(new URL(spec).password);
  } catch {
    // An unparsable spec never got this far; nothing to hide then.
  }
  const hide = (text: string): string => (password.length > 0 ? text.split(password).join('***') : text);
  const reason = hide(String(failure?.message ?? error));
  const code = typeof failure?.code === 'string' ? failure.code : undefined;
  const store = describeStoreSpec(spec);
  return new ServerlessWorkerError(
    'SW_STORE_UNAVAILABLE',
    `Could not open the job store ${store}: ${reason}. Check that PostgreSQL runs there and that the user, password and database in --store (or ${STORE_ENV}) are right.`,
    { store, ...(code !== undefined ? { reason: code } : {}) },
  );
}
