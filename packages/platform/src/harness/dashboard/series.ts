/**
 * @module harness/dashboard/series
 * The dashboard's charts: one point per sample interval with jobs ended per second,
 * queue wait (delayTime) and execution time percentiles of the jobs that ended in it,
 * and GPU utilisation and memory per card; the same job figures per endpoint (the page
 * charts one endpoint or all). Jobs are counted as they end (the live hub
 * subscribes only while a page is open); when the first page opens, the history is
 * rebuilt from the jobs the harness still keeps (from the first interval in which one
 * ended), so the charts show the last minutes at once. A ring keeps `historyMinutes`
 * of points. Each live point also carries every endpoint's queue depth at its time (a
 * rebuilt point has none: the store keeps no past queue depths).
 */
import type { GpuReadResult, StoredJob } from 'serverless-worker/internal';

export interface GpuPoint {
  readonly index: number;
  readonly name: string;
  readonly utilizationPercent: number | null;
  readonly memoryUsedBytes: number | null;
  readonly memoryTotalBytes: number | null;
}

/** An interval's job figures, of all endpoints or of one. Percentiles are null when no job ended in it. */
export interface JobFigures {
  readonly jobsPerSecond: number;
  readonly failedPerSecond: number;
  readonly delayP50: number | null;
  readonly delayP95: number | null;
  readonly delayP99: number | null;
  readonly execP50: number | null;
  readonly execP95: number | null;
  readonly execP99: number | null;
}

/** One chart point: all endpoints' figures, each endpoint's (only those where a job ended), the GPU cards. */
export interface SeriesPoint extends JobFigures {
  /** End of the interval, epoch ms. */
  readonly t: number;
  /** Per endpoint with a job ended in the interval (the charts' endpoint choice); absent endpoints had none. */
  readonly endpoints: Readonly<Record<string, JobFigures>>;
  readonly gpus: readonly GpuPoint[];
  /** Jobs IN_QUEUE per endpoint when the point was taken; absent on points rebuilt from the jobs kept. */
  readonly queued?: Readonly<Record<string, number>>;
}

/** The `p` (0-1) percentile of sorted `values` (nearest rank), null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank] ?? null;
}

interface Counts {
  ended: number;
  failed: number;
  delays: number[];
  execs: number[];
}

/** An interval's jobs: all of them, and per endpoint. */
interface Bucket extends Counts {
  byEndpoint: Map<string, Counts>;
}

const emptyCounts = (): Counts => ({ ended: 0, failed: 0, delays: [], execs: [] });
const emptyBucket = (): Bucket => ({ ...emptyCounts(), byEndpoint: new Map() });

function addJob(bucket: Bucket, job: StoredJob): void {
  count(bucket, job);
  let own = bucket.byEndpoint.get(job.endpointId);
  if (!own) {
    own = emptyCounts();
    bucket.byEndpoint.set(job.endpointId, own);
  }
  count(own, job);
}

function count(bucket: Counts, job: StoredJob): void {
  bucket.ended++;
  if (job.status === 'FAILED' || job.status === 'TIMED_OUT') bucket.failed++;
  if (job.startedAt !== undefined) {
    bucket.delays.push(Math.max(0, job.startedAt - job.queuedAt));
    if (job.endedAt !== undefined) bucket.execs.push(Math.max(0, job.endedAt - job.startedAt));
  }
}

function gpuPoints(read: GpuReadResult | undefined): GpuPoint[] {
  if (!read?.ok) return [];
  return read.gpus.map((g) => ({
    index: g.index,
    name: g.name,
    utilizationPercent: g.utilizationPercent,
    memoryUsedBytes: g.memoryUsedBytes,
    memoryTotalBytes: g.memoryTotalBytes,
  }));
}

function toPoint(t: number, intervalMs: number, bucket: Bucket, gpus: GpuPoint[]): SeriesPoint {
  const endpoints: Record<string, JobFigures> = {};
  for (const [endpointId, counts] of bucket.byEndpoint) endpoints[endpointId] = figures(counts, intervalMs);
  return { t, ...figures(bucket, intervalMs), endpoints, gpus };
}

function figures(bucket: Counts, intervalMs: number): JobFigures {
  const delays = bucket.delays.sort((a, b) => a - b);
  const execs = bucket.execs.sort((a, b) => a - b);
  const perSecond = 1000 / intervalMs;
  return {
    jobsPerSecond: bucket.ended * perSecond,
    failedPerSecond: bucket.failed * perSecond,
    delayP50: percentile(delays, 0.5),
    delayP95: percentile(delays, 0.95),
    delayP99: percentile(delays, 0.99),
    execP50: percentile(execs, 0.5),
    execP95: percentile(execs, 0.95),
    execP99: percentile(execs, 0.99),
  };
}

export class Series {
  readonly #intervalMs: number;
  readonly #capacity: number;
  #points: SeriesPoint[] = [];
  #current = emptyBucket();

  constructor(intervalMs: number, historyMinutes: number) {
    this.#intervalMs = intervalMs;
    this.#capacity = Math.max(1, Math.ceil((historyMinutes * 60_000) / intervalMs));
  }

  /** Rebuild the history from the jobs still kept (ended ones), up to `now`. */
  rebuild(jobs: Iterable<StoredJob>, now: number): void {
    const start = now - this.#capacity * this.#intervalMs;
    const buckets = new Map<number, Bucket>();
    for (const job of jobs) {
      if (job.endedAt === undefined || job.endedAt <= start || job.endedAt > now) continue;
      const slot = Math.ceil((job.endedAt - start) / this.#intervalMs);
      let bucket = buckets.get(slot);
      if (!bucket) {
        bucket = emptyBucket();
        buckets.set(slot, bucket);
      }
      addJob(bucket, job);
    }
    this.#points = [];
    // From the first interval with an ended job: a fresh harness's charts start empty and grow.
    const firstSlot = buckets.size === 0 ? this.#capacity + 1 : Math.min(...buckets.keys());
    for (let slot = firstSlot; slot <= this.#capacity; slot++) {
      this.#points.push(toPoint(start + slot * this.#intervalMs, this.#intervalMs, buckets.get(slot) ?? emptyBucket(), []));
    }
    this.#current = emptyBucket();
  }

  /** Count a job that just ended into the current interval. */
  jobEnded(job: StoredJob): void {
    addJob(this.#current, job);
  }

  /** Close the current interval at `now` with the latest GPU read and the queue depths now (per endpoint); answers its point. */
  close(now: number, gpu: GpuReadResult | undefined, queued?: Readonly<Record<string, number>>): SeriesPoint {
    const figures = toPoint(now, this.#intervalMs, this.#current, gpuPoints(gpu));
    const point = queued !== undefined ? { ...figures, queued } : figures;
    this.#current = emptyBucket();
    this.#points.push(point);
    if (this.#points.length > this.#capacity) this.#points.splice(0, this.#points.length - this.#capacity);
    return point;
  }

  points(): readonly SeriesPoint[] {
    return this.#points;
  }
}
