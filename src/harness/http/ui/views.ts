/**
 * @module harness/http/ui/views
 * The dashboard's data, built from the harness as it is: endpoint rows (queue depth,
 * jobs by state, workers by state), a page of an endpoint's jobs (newest first,
 * filtered by state and id), one job in full, and the workers. Plain functions over
 * the harness, so the routes, the live hub and the benchmarks share them.
 *
 * Where later work plugs in: attempts (a StoredJob field) go into `jobDetail`;
 * launcher and load-balancing state arrive as DashboardPanel snapshots (settings.ts).
 */
import { JOB_STATUSES, isTerminal, type JobErrorPayload, type JobStatus, type StreamChunk } from '../../../job/index.js';
import type { GpuReadResult } from '../../../gpu/reading.js';
import type { EndpointJobs } from '../../endpoint-jobs.js';
import type { Harness } from '../../harness.js';
import type { StoredJob } from '../../store/job-store.js';
import { summarizeJob, type RequestSummary } from '../queue-api/requests-route.js';
import type { JobGpuView } from './gpu-job-log.js';
import type { WebhookDeliveryRecord } from './webhook-log.js';

export type StateCounts = Record<JobStatus, number>;

export interface EndpointRow {
  id: string;
  /** Jobs waiting in the queue (IN_QUEUE). */
  queueDepth: number;
  /** Jobs kept, by state (ended ones until their retention ends). */
  jobs: StateCounts;
  /** Jobs kept in all. */
  retained: number;
  workers: { idle: number; running: number };
  /** Made by the first job or worker that named it (any id works): shown, since a misspelt id in a client looks the same. */
  createdOnUse?: true;
}

function zeroCounts(): StateCounts {
  const counts = {} as StateCounts;
  for (const status of JOB_STATUSES) counts[status] = 0;
  return counts;
}

/** One endpoint's row: the store's per-state counters, no walk over its jobs. */
export async function endpointRow(endpoint: EndpointJobs): Promise<EndpointRow> {
  const { retained, ...counts } = await endpoint.stateCounts();
  const jobs = zeroCounts();
  for (const status of JOB_STATUSES) jobs[status] = counts[status];
  return { id: endpoint.id, queueDepth: jobs.IN_QUEUE, jobs, retained, workers: await endpoint.workers.counts() };
}

export async function endpointRows(harness: Harness): Promise<EndpointRow[]> {
  const rows = await Promise.all([...harness.endpoints()].map(endpointRow));
  for (const row of rows) if (harness.createdOnUse.has(row.id)) row.createdOnUse = true;
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

export interface JobsQuery {
  /** Only these states; default all. */
  states?: readonly JobStatus[] | undefined;
  /** Only ids containing this text (case-insensitive); default all. */
  search?: string | undefined;
  offset: number;
  limit: number;
}

export interface JobsPage {
  endpointId: string;
  /** Jobs matching the filter. */
  total: number;
  offset: number;
  limit: number;
  jobs: RequestSummary[];
}

/** A page of `endpoint`'s jobs, newest first: the store pages, summaries only for the page. */
export async function jobsPage(endpoint: EndpointJobs, query: JobsQuery): Promise<JobsPage> {
  const page = await endpoint.list({ states: query.states, search: query.search, offset: query.offset, limit: query.limit });
  return { endpointId: endpoint.id, total: page.total, offset: query.offset, limit: query.limit, jobs: page.jobs.map(summarizeJob) };
}

/** A job in full, for the job page. */
export interface JobDetail extends RequestSummary {
  endpointId: string;
  input: unknown;
  /** Output (final, or the latest progress while running). */
  output?: unknown;
  /** The structured error payload, for FAILED and TIMED_OUT jobs. */
  error?: JobErrorPayload;
  policy?: unknown;
  /** Chunks not yet handed out by /stream (chunks read by a client before are counted in `chunks` only). */
  pendingChunks: StreamChunk[];
  /** Webhook deliveries that have ended (none while under way, or with no webhook). */
  webhookDeliveries: readonly WebhookDeliveryRecord[];
  /** The job's GPU summary (in-process workers), or why there is none; absent when not asked for. */
  gpu?: JobGpuView;
  terminal: boolean;
}

/** `pendingChunks`: the job's unread chunks (EndpointJobs.peekStream); `gpu`: from the GpuJobLog. */
export function jobDetail(job: StoredJob, pendingChunks: readonly StreamChunk[], deliveries: readonly WebhookDeliveryRecord[], gpu?: JobGpuView): JobDetail {
  return {
    ...summarizeJob(job),
    endpointId: job.endpointId,
    input: job.request.input,
    ...(job.output !== undefined ? { output: job.output } : {}),
    ...(job.error !== undefined ? { error: job.error } : {}),
    ...(job.request.policy !== undefined ? { policy: job.request.policy } : {}),
    pendingChunks: [...pendingChunks],
    webhookDeliveries: deliveries,
    ...(gpu !== undefined ? { gpu } : {}),
    terminal: isTerminal(job.status),
  };
}

export interface WorkerRow {
  id: string;
  endpointId: string;
  state: 'running' | 'idle';
  jobs: string[];
  firstSeenAt: string;
  lastSeenAt: string;
  /** ms since the last heartbeat or request. */
  silentMs: number;
  pingIntervalMs?: number;
}

export async function workerRows(harness: Harness, now: number): Promise<WorkerRow[]> {
  const rows: WorkerRow[] = [];
  for (const endpoint of harness.endpoints()) {
    for (const worker of await endpoint.workers.all()) {
      rows.push({
        id: worker.id,
        endpointId: endpoint.id,
        state: worker.jobIds.length > 0 ? 'running' : 'idle',
        jobs: [...worker.jobIds],
        firstSeenAt: new Date(worker.firstSeenAt).toISOString(),
        lastSeenAt: new Date(worker.lastSeenAt).toISOString(),
        silentMs: Math.max(0, now - worker.lastSeenAt),
        ...(worker.pingIntervalMs !== undefined ? { pingIntervalMs: worker.pingIntervalMs } : {}),
      });
    }
  }
  return rows;
}

/** GPU readings as the workers view shows them: the cards, or why there are none. */
export type GpuView = { available: true; gpus: unknown[]; at?: string } | { available: false; reason: string };

/** `hasSource`: whether the harness was given a GPU source at all. */
export function gpuView(hasSource: boolean, read: GpuReadResult | undefined): GpuView {
  if (!hasSource) return { available: false, reason: 'this harness has no GPU reading source (an in-process worker with GPU sampling, or the harness command)' };
  if (read === undefined) return { available: false, reason: 'no reading yet: the first is taken when a dashboard page opens' };
  if (!read.ok) return { available: false, reason: `${read.reason}: ${read.message}` };
  return { available: true, gpus: read.gpus, at: new Date(read.readAt).toISOString() };
}
