/**
 * @module job/limits
 * The platform's numeric limits (spec sections 4.3 and 8), named once.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;

/** policy.executionTimeout: default 10 min, 5 s .. 7 days. */
export const EXECUTION_TIMEOUT_MS = { min: 5 * SECOND, max: 7 * DAY, default: 10 * MINUTE } as const;
/** policy.ttl: default 24 h, 10 s .. 7 days; counts from submission, queue time included. */
export const TTL_MS = { min: 10 * SECOND, max: 7 * DAY, default: DAY } as const;
/** /runsync ?wait=: default 90 s, 1 s .. 300 s. */
export const RUNSYNC_WAIT_MS = { min: SECOND, max: 300 * SECOND, default: 90 * SECOND } as const;
/** How long a finished job stays readable (spec 8.1). */
export const RETENTION_MS = {
  /** After /run. */
  async: 30 * MINUTE,
  /** After /runsync with the default wait. */
  sync: MINUTE,
  /** After /runsync with a longer wait: at most this. */
  syncMax: 5 * MINUTE,
} as const;
/** Largest serialized output of one stream chunk: 1 MiB. */
export const MAX_CHUNK_BYTES = 1024 * 1024;
/** Request body limits (spec 8.1): the service says MB; we read it as 10^6 bytes. */
export const MAX_BODY_BYTES = { run: 10 * 1000 * 1000, runsync: 20 * 1000 * 1000 } as const;
/**
 * Deepest JSON accepted, in nested arrays and objects (the outermost counts as 1): a
 * job request body at submission, and a handler's output, stream chunk or progress. The
 * service publishes no depth limit; ours keeps every recursive step the harness and the
 * worker take on a value (JSON.stringify survives about 4 100 levels with Node's default
 * stack, structuredClone about 1 900, a PostgreSQL json column more) with a margin
 * of 4 for the stack already in use when they run.
 */
export const MAX_JSON_DEPTH = 1000;
/**
 * Most object keys in a job request body (duplicates counted): 1 000 000, so that any
 * body of the 10 MB /run limit with keys of 4 characters or more fits (the 9.9 MB body of
 * ~834 000 keys in bench/ does). Bounds the heap a submission may cost before its bytes
 * are read.
 */
export const MAX_JSON_KEYS = 1_000_000;
