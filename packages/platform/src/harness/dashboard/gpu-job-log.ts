/**
 * @module harness/dashboard/gpu-job-log
 * The per-job GPU summary for the job page (peak and mean utilisation, peak memory,
 * per card: the figures of the worker's job-finished log line), for jobs run by
 * in-process workers (`--serve-api`). Each reading of the dashboard's GPU source is
 * folded into the window of every job an in-process worker holds at that moment.
 * The source reads only while a job's GPU window is open (the worker's own telemetry)
 * or a page is open, so with neither there is nothing to do; no per-job hook.
 *
 * A remote worker (over the worker API, or launched with --image) reads its own GPUs
 * and writes its summary in its own log; the harness does not see it, and the page says
 * so of that job (job-runner.ts says which kind of worker ran it).
 */
import type { JobRunner } from './job-runner.js';
import { createWindowAccumulator, type GpuReadResult, type GpuWindowAccumulator, type GpuWindowSummary, type Harness } from 'serverless-worker/internal';

/** What the job page shows about a job's GPU use. */
export type JobGpuView = { readonly available: true; readonly summary: GpuWindowSummary } | { readonly available: false; readonly reason: string };

export const GPU_JOB_LOG_LIMIT = 10_000;

export class GpuJobLog {
  readonly #byJob = new Map<string, GpuWindowAccumulator>();
  readonly #maxJobs: number;
  /** Whether a GPU source feeds the log at all. */
  readonly #fed: boolean;

  /** Keep the windows of at most `maxJobs` jobs (the first recorded goes first). */
  constructor(options: { fed: boolean; maxJobs?: number }) {
    this.#fed = options.fed;
    this.#maxJobs = options.maxJobs ?? GPU_JOB_LOG_LIMIT;
  }

  /** Fold `read` into the windows of `held` (endpoint id, job id) pairs. */
  add(read: GpuReadResult, held: Iterable<readonly [string, string]>): void {
    if (!read.ok) return;
    for (const [endpointId, jobId] of held) {
      const key = `${endpointId}\u0000${jobId}`;
      let window = this.#byJob.get(key);
      if (!window) {
        window = createWindowAccumulator();
        this.#byJob.set(key, window);
        if (this.#byJob.size > this.#maxJobs) {
          const oldest = this.#byJob.keys().next().value;
          if (oldest !== undefined) this.#byJob.delete(oldest);
        }
      }
      window.add(read.gpus);
    }
  }

  /** The job's summary so far (final once it ended), or why there is none, said for the worker that ran it (`runner`). */
  forJob(endpointId: string, jobId: string, runner: JobRunner): JobGpuView {
    const summary = this.#byJob.get(`${endpointId}\u0000${jobId}`)?.summary();
    if (summary) return { available: true, summary };
    return { available: false, reason: noReadingReason(runner, this.#fed) };
  }

  /** Samples taken for the job so far (0 when none): part of what makes the job page's update. */
  samples(endpointId: string, jobId: string): number {
    return this.#byJob.get(`${endpointId}\u0000${jobId}`)?.summary()?.samples ?? 0;
  }
}

/** Why a job has no GPU summary, true of the worker that ran it. */
export function noReadingReason(runner: JobRunner, fed: boolean): string {
  const own = 'its GPU use is in its own job-finished log line (in the log lines below, when the harness captures them)';
  switch (runner.kind) {
    case 'not-run':
      return 'no worker has run it yet';
    case 'here':
      return fed
        ? `no GPU reading was taken while ${runner.workerId} (an in-process worker) ran it: no GPU, or a job shorter than one reading`
        : `this harness has no GPU source: only in-process workers (--serve-api with GPU sampling) report it here; ${runner.workerId} ran it`;
    case 'launched':
      return `${runner.workerId} ran it: a worker process this harness launched, which reads its own GPUs; the harness takes no reading for it, ${own}`;
    case 'remote':
      return `${runner.workerId} ran it: a remote worker (over the worker API), which reads its own GPUs; the harness takes no reading for it, ${own}`;
    case 'gone':
      return `${runner.workerId} ran it and is no longer connected; the harness reads GPUs only for in-process workers, a worker in its own process writes its GPU use in its job-finished log line`;
  }
}

/** The jobs in-process workers (those that send no heartbeats) and `local` ones hold now, as (endpoint id, job id). */
async function heldInProcess(harness: Harness, local?: (endpointId: string, workerId: string) => boolean): Promise<Array<readonly [string, string]>> {
  const held: Array<readonly [string, string]> = [];
  for (const endpoint of harness.endpoints()) {
    for (const worker of await endpoint.workers.all()) {
      if (worker.heartbeats && local?.(endpoint.id, worker.id) !== true) continue;
      for (const jobId of worker.jobIds) held.push([endpoint.id, jobId]);
    }
  }
  return held;
}

/** Feed `log` from each reading of `onReading` (for in-process workers, and those `local` names); answers the unsubscribe. */
export function bindGpuJobLog(
  harness: Harness,
  log: GpuJobLog,
  onReading: (listener: (read: GpuReadResult) => void) => () => void,
  local?: (endpointId: string, workerId: string) => boolean,
): () => void {
  return onReading((read) => {
    if (!read.ok) return;
    void heldInProcess(harness, local)
      .then((held) => log.add(read, held))
      .catch(() => {
        // The harness is closing (its store is gone): the reading is simply not counted.
      });
  });
}
