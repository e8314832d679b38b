/**
 * @module harness/store/retention
 * How long a job is kept once it ends: 30 min after /run; after /runsync 1 min, or as
 * long as a longer wait, at most 5 min (spec 8.1).
 */
import { RETENTION_MS } from '../../job/index.js';

/** The /runsync wait when none is given, ms (spec 8.1). */
const DEFAULT_SYNC_WAIT_MS = 90_000;

/**
 * Milliseconds a synchronous job is kept after it ends, for a /runsync wait of
 * `waitMs`: 1 min with the default wait (90 s) or a shorter one; with a longer wait,
 * as long as the wait, at most 5 min (spec 8.1).
 */
export function syncRetentionMs(waitMs: number | undefined): number {
  if (waitMs === undefined || waitMs <= DEFAULT_SYNC_WAIT_MS) return RETENTION_MS.sync;
  return Math.min(RETENTION_MS.syncMax, Math.max(RETENTION_MS.sync, waitMs));
}
