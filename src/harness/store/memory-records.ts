/**
 * @module harness/store/memory-records
 * The in-memory store's own records: a job and a worker as it keeps them (mutable,
 * never handed out), and the copies it answers. Values that come in (requests,
 * outputs, errors, chunks) are cloned and frozen once, so the copies answered can
 * share them and no caller can change what the store holds.
 */
import { RawJson, type JobRequest, type StreamChunk } from '../../job/index.js';
import type { StoredJob, StoredWorker } from './job-store.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A job as the memory store keeps it: StoredJob's fields, writable, and its unread chunks. */
export type MemoryJob = Mutable<Omit<StoredJob, 'unreadChunkCount'>> & {
  /** Chunks posted and not read yet: NO_CHUNKS (shared, frozen) until the first one, then an array of the job's own. */
  unread: StreamChunk[];
  /** The request's size as received (SubmitOptions.bytes), counted while the job is queued. */
  readonly requestBytes: number;
};

export interface MemoryWorker {
  readonly id: string;
  readonly endpointId: string;
  readonly firstSeenAt: number;
  lastSeenAt: number;
  /** Jobs it holds (IN_PROGRESS with its id), in the order it took them. */
  readonly jobIds: Set<string>;
  initializing: boolean;
  heartbeats: boolean;
  pingIntervalMs?: number;
}

/**
 * The unread chunks of every job that has none: one frozen array, not one each (most jobs
 * stream nothing, and a retained job's empty array was 32 of its bytes). pushChunk gives a
 * job an array of its own at its first chunk.
 */
export const NO_CHUNKS: StreamChunk[] = Object.freeze([]) as unknown as StreamChunk[];

/**
 * A new record: `queued`'s fields, then every other field a StoredJob may hold, undefined
 * until set, and the store's own. Later changes only assign fields that are there (never
 * add one): V8 keeps such an object in one compact shape, whereas fields added one by one
 * by Object.assign, past a dozen outside the object, turned every finished job it retains
 * into a dictionary of about 1.6 KB (a heap snapshot after 20 000 `/runsync`: 32 of 71 MB,
 * bench/README, issue 34 item 3).
 */
export function newMemoryJob(queued: Omit<StoredJob, 'unreadChunkCount'>, requestBytes: number): MemoryJob {
  // One literal, no spread: every record then shares one shape (spread copies took a shape of their own each).
  return {
    id: queued.id,
    endpointId: queued.endpointId,
    request: queued.request,
    sync: queued.sync,
    status: queued.status,
    submittedAt: queued.submittedAt,
    queuedAt: queued.queuedAt,
    retries: queued.retries,
    attempt: queued.attempt,
    lost: queued.lost,
    chunkCount: queued.chunkCount,
    expiresAt: queued.expiresAt,
    retentionMs: queued.retentionMs,
    startedAt: queued.startedAt,
    endedAt: queued.endedAt,
    workerId: queued.workerId,
    output: queued.output,
    error: queued.error,
    resultFrom: queued.resultFrom,
    cancelledFrom: queued.cancelledFrom,
    executionDeadline: queued.executionDeadline,
    executionTimeoutMs: queued.executionTimeoutMs,
    deleteAt: queued.deleteAt,
    reportedAt: queued.reportedAt,
    unread: NO_CHUNKS,
    requestBytes,
  };
}

/**
 * A request as the store keeps it: a frozen copy, except an input kept as its text
 * (RawJson: immutable already), which is kept as it is, not parsed or copied.
 */
export function ownedRequest(request: JobRequest): JobRequest {
  if (!(request.input instanceof RawJson)) return owned(request);
  const { input, ...rest } = request;
  return Object.freeze({ ...owned(rest), input });
}

/** A deep copy of a JSON-like value, frozen: safe to share with every reader. */
export function owned<T>(value: T): T {
  if (value === undefined || value === null || typeof value !== 'object') return value;
  const copy = frozenCopy(value, 0);
  return copy === NOT_PLAIN ? deepFreeze(structuredClone(value)) : (copy as T);
}

/** What frozenCopy answers for a value it leaves to structuredClone. */
const NOT_PLAIN = Symbol('not plain data');
/** Past this depth (or a cycle) structuredClone copies the value. */
const MAX_PLAIN_DEPTH = 64;

/**
 * A frozen deep copy of plain data (objects of Object's or no prototype, dense arrays,
 * primitives), made in one pass; NOT_PLAIN for anything else (a class instance, a
 * function, a hole, a `__proto__` key, a cycle or deep nesting), which structuredClone
 * then copies as before. A job's request and output are small JSON values, and
 * structuredClone's serialise-and-read costs several times this per job (bench/README,
 * issue 34, second pass).
 */
function frozenCopy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  if (depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const items = value as unknown[];
    const out: unknown[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      if (!(i in items)) return NOT_PLAIN;
      const item = frozenCopy(items[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return Object.freeze(out);
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return NOT_PLAIN;
    const item = frozenCopy((value as Record<string, unknown>)[key], depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[key] = item;
  }
  return Object.freeze(out);
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/**
 * The record answered for `job`: a new object, its nested values the store's frozen ones.
 * Fields left undefined are not copied (built by assignment: a copy whose undefined
 * fields were `delete`d afterwards fell into V8's slow dictionary mode, and this runs for
 * every job the store hands out: 9 % of a busy local API's CPU, bench/README.md).
 */
export function snapshotJob(job: MemoryJob): StoredJob {
  const copy: Record<string, unknown> = {};
  for (const key in job) {
    if (key === 'unread' || key === 'requestBytes') continue;
    const value = job[key as keyof MemoryJob];
    if (value !== undefined) copy[key] = value;
  }
  copy.unreadChunkCount = job.unread.length;
  return Object.freeze(copy) as unknown as StoredJob;
}

export function snapshotWorker(worker: MemoryWorker): StoredWorker {
  return Object.freeze({
    endpointId: worker.endpointId,
    id: worker.id,
    firstSeenAt: worker.firstSeenAt,
    lastSeenAt: worker.lastSeenAt,
    jobIds: Object.freeze([...worker.jobIds]),
    initializing: worker.initializing,
    heartbeats: worker.heartbeats,
    ...(worker.pingIntervalMs !== undefined ? { pingIntervalMs: worker.pingIntervalMs } : {}),
  });
}
