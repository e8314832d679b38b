/**
 * @module harness/launcher/queue-snapshot
 * What the scaler needs from an endpoint's jobs, read with bounded queries every tick:
 * the number of queued jobs and the newest `sample` of them (queuedAt, lowPriority),
 * and for REQUEST_COUNT the number of running jobs and the newest `sample` of those.
 * `sample` is what can change the decision (workersMax x scalerValue jobs for
 * REQUEST_COUNT, 2 x workersMax for QUEUE_DELAY, at least 20, at most 1000), so a
 * queue of 100 000 jobs costs the same as one of 1 000. Jobs beyond the sample count as
 * normal (not lowPriority) and, for QUEUE_DELAY, as old as the oldest one read: they
 * were submitted earlier.
 */
import type { EndpointJobs, StoredJob } from 'serverless-worker/internal';
import type { QueuedJobSnapshot, ScaleSettings } from './scale-decision.js';

export interface JobWait {
  jobId: string;
  workerId: string | undefined;
  waitMs: number;
}

export interface QueueSnapshot {
  queued: QueuedJobSnapshot[];
  /** IN_PROGRESS jobs that are not lowPriority. */
  runningJobs: number;
}

const MIN_SAMPLE = 20;
const MAX_SAMPLE = 1_000;

/** How many jobs of each state the scaler reads: those that can change its decision. */
export function sampleSize(settings: Pick<ScaleSettings, 'scalerType' | 'scalerValue' | 'workersMax'>): number {
  const wanted = settings.scalerType === 'REQUEST_COUNT' ? settings.workersMax * settings.scalerValue : 2 * settings.workersMax;
  return Math.min(MAX_SAMPLE, Math.max(MIN_SAMPLE, Math.ceil(wanted)));
}

const isLow = (job: StoredJob): boolean => job.request.policy?.lowPriority === true;

/** The scaler's view of the queue from `total` jobs of which `sample` (newest first) were read. */
export function queueSnapshot(
  queuedTotal: number,
  queuedSample: readonly StoredJob[],
  runningTotal: number,
  runningSample: readonly StoredJob[],
): QueueSnapshot {
  const queued: QueuedJobSnapshot[] = queuedSample.map((job) => ({ queuedAt: job.queuedAt, lowPriority: isLow(job) }));
  // Not read: submitted before the oldest read, so queued at least as long; counted as
  // normal jobs, at most as many as were read (the sample already covers what the decision can use).
  const oldest = queued.reduce((min, job) => Math.min(min, job.queuedAt), Number.POSITIVE_INFINITY);
  const beyond = Math.min(Math.max(0, queuedTotal - queuedSample.length), Math.max(queuedSample.length, MIN_SAMPLE));
  for (let i = 0; i < beyond; i++) queued.push({ queuedAt: Number.isFinite(oldest) ? oldest : 0, lowPriority: false });
  const runningLow = runningSample.filter(isLow).length;
  return { queued, runningJobs: Math.max(0, runningTotal - runningLow) };
}

/** Read the endpoint's queue for the scaler: one bounded query for QUEUE_DELAY, two for REQUEST_COUNT. */
export async function readQueue(
  jobs: Pick<EndpointJobs, 'list'>,
  settings: Pick<ScaleSettings, 'scalerType' | 'scalerValue' | 'workersMax'>,
): Promise<QueueSnapshot> {
  const limit = sampleSize(settings);
  const [queued, running] = await Promise.all([
    jobs.list({ states: ['IN_QUEUE'], offset: 0, limit }),
    settings.scalerType === 'REQUEST_COUNT' ? jobs.list({ states: ['IN_PROGRESS'], offset: 0, limit }) : undefined,
  ]);
  return queueSnapshot(queued.total, queued.jobs, running?.total ?? 0, running?.jobs ?? []);
}
