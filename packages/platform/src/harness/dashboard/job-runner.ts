/**
 * @module harness/dashboard/job-runner
 * Which kind of worker ran a job, as the job page's GPU line needs it (issue 48 item 7):
 * the harness reads GPUs only for the jobs of workers on its own machine that it can see
 * (in-process workers, and the `--serve-api` child it names local); a worker in its own
 * process (launched by this harness, or joined over the worker API) reports its GPU use
 * itself, in its job-finished log line. Saying "no reading was taken while an in-process
 * worker ran it" of a launched worker's job was untrue.
 */
import { ranOn, type Harness, type StoredJob } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';

export type JobRunner =
  /** No worker has taken it yet. */
  | { readonly kind: 'not-run' }
  /** An in-process worker, or one the harness names local: the harness's GPU readings count for it. */
  | { readonly kind: 'here'; readonly workerId: string }
  /** A worker process this harness's launcher started. */
  | { readonly kind: 'launched'; readonly workerId: string }
  /** A worker connected over the worker API (heartbeats), not launched here. */
  | { readonly kind: 'remote'; readonly workerId: string }
  /** A worker no longer connected, not launched here (what it was is not known any more). */
  | { readonly kind: 'gone'; readonly workerId: string };

export interface RunnerSources {
  readonly harness: Harness;
  /** Workers on this machine that send heartbeats but count as local (the --serve-api child). */
  readonly local?: ((endpointId: string, workerId: string) => boolean) | undefined;
  readonly launched?: LaunchedWorkersView | undefined;
}

export async function jobRunner(job: StoredJob, sources: RunnerSources): Promise<JobRunner> {
  const workerId = ranOn(job);
  if (!workerId) return { kind: 'not-run' };
  if (sources.local?.(job.endpointId, workerId) === true) return { kind: 'here', workerId };
  if (sources.launched?.launched?.(job.endpointId, workerId) === true) return { kind: 'launched', workerId };
  const worker = await sources.harness.findEndpoint(job.endpointId)?.workers.get(workerId);
  if (!worker) return { kind: 'gone', workerId };
  return worker.heartbeats ? { kind: 'remote', workerId } : { kind: 'here', workerId };
}
