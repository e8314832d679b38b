/**
 * @module harness/store/open-store
 * Which job store a harness uses, from `--store`, the `SW_HARNESS_STORE` environment
 * variable, or the `store` option of createHarnessServer: `memory` (the default: jobs
 * live in this process and die with it) or a PostgreSQL connection string
 * (`postgres://user:password@host:5432/database`, `postgresql://…` too): jobs survive a
 * restart and several harness processes on one database share the queue.
 */
import * as z from 'zod';
import { ServerlessWorkerError, parseOrThrow } from '../../job/index.js';
import type { JobStore } from './job-store.js';
import { MemoryJobStore } from './memory-job-store.js';

/** The environment variable that names the store when `--store` does not. */
export const STORE_ENV = 'SW_HARNESS_STORE';

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

export interface OpenStoreOptions {
  /** Errors of a shared store's background work (its LISTEN connection); default ignored. */
  readonly onError?: (error: unknown) => void;
}

/** Open the store `spec` names (validated: SW_INVALID_OPTIONS names what was wrong). */
export async function openJobStore(spec: string, options: OpenStoreOptions = {}): Promise<JobStore> {
  const valid = parseOrThrow(StoreSpecSchema, spec, 'SW_INVALID_OPTIONS', 'store');
  if (valid === 'memory') return new MemoryJobStore();
  // Loaded only when asked for: a harness on the in-memory store never loads the driver.
  const { PostgresJobStore } = await import('./postgres/postgres-job-store.js');
  try {
    return await PostgresJobStore.open(valid, options.onError ? { onError: options.onError } : {});
  } catch (error) {
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
