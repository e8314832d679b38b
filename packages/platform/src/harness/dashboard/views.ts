/**
 * @module harness/dashboard/views
 * The dashboard's data, built from the harness as it is: endpoint rows (queue depth,
 * jobs by state, workers by state), a page of an endpoint's jobs (newest first,
 * filtered by state and id), one job in full, and the workers. Plain functions over
 * the harness, so the routes, the live hub and the benchmarks share them.
 *
 * Where later work plugs in: attempts (a StoredJob field) go into `jobDetail`;
 * launcher and load-balancing state arrive as DashboardPanel snapshots (settings.ts).
 */
import {
  type EndpointJobs,
  type GpuReading,
  type GpuReadResult,
  type Harness,
  isTerminal,
  JOB_STATUSES,
  type JobErrorPayload,
  type JobStatus,
  type ListQuery,
  ranOn,
  type StoredJob,
  type StreamChunk,
} from 'serverless-worker/internal';
import type { LaunchedHealth, LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { summarizeJob, type RequestSummary } from '../queue-api/requests-route.js';
import type { JobGpuView } from './gpu-job-log.js';
import { jobRemoval, type JobRemoval } from './job-removal.js';
import type { WebhookDeliveryRecord } from './webhook-log.js';
import { VIEW_CHUNKS, previewChunk, previewError, previewValue, type ChunkPreview, type ValuePreview } from './value-preview.js';

export type StateCounts = Record<JobStatus, number>;

export interface EndpointRow {
  id: string;
  /** The endpoint's name, for endpoints made through the management API (/v1). */
  name?: string;
  /** Jobs waiting in the queue (IN_QUEUE). */
  queueDepth: number;
  /** Jobs kept, by state (ended ones until their retention ends: these counts fall as results expire). */
  jobs: StateCounts;
  /** Jobs kept in all. */
  retained: number;
  /** /health's counts: jobs completed, failed and retried since the endpoint was created (expiry does not lower them). */
  totals: { completed: number; failed: number; retried: number };
  workers: { idle: number; running: number };
  health: EndpointHealth;
  /** Made by the first job or worker that named it (any id works): shown, since a misspelt id in a client looks the same. */
  createdOnUse?: true;
}

/**
 * How the endpoint is doing, in a word and a reason: `unhealthy` (its launched worker
 * command keeps crashing), `warning` (jobs queued and no worker to take them), `ok`.
 */
export interface EndpointHealth {
  state: 'ok' | 'warning' | 'unhealthy';
  reason: string;
}

/** What the dashboard knows of an endpoint besides its jobs: its /v1 name, the launcher's /health. */
export interface EndpointFacts {
  readonly name?: string | undefined;
  readonly launched?: LaunchedHealth | undefined;
  /** Why the launcher starts no worker of this endpoint here, when it runs and does not. */
  readonly notLaunched?: string | undefined;
}

function zeroCounts(): StateCounts {
  const counts = {} as StateCounts;
  for (const status of JOB_STATUSES) counts[status] = 0;
  return counts;
}

export function endpointHealth(
  queueDepth: number,
  workers: { idle: number; running: number },
  launched: LaunchedHealth | undefined,
  notLaunched?: string,
): EndpointHealth {
  if (launched && !launched.healthy) return { state: 'unhealthy', reason: launched.unhealthyReason ?? 'its worker command keeps failing to start' };
  const serving = workers.idle + workers.running;
  if (queueDepth > 0 && serving === 0) {
    if (launched && launched.initializing > 0) return { state: 'ok', reason: `${queueDepth} queued; ${launched.initializing} worker(s) starting` };
    if (launched && launched.throttled > 0)
      return { state: 'warning', reason: `${queueDepth} queued, no worker: ${launched.throttled} wanted but throttled (no GPU free)` };
    if (notLaunched !== undefined) return { state: 'warning', reason: `${queueDepth} queued, no worker: ${notLaunched}` };
    return { state: 'warning', reason: `${queueDepth} queued, no worker to take them (start one, or give the launcher its image)` };
  }
  if (serving === 0) return { state: 'ok', reason: 'no worker, nothing queued' };
  return { state: 'ok', reason: `${workers.idle} idle, ${workers.running} running` };
}

/** One endpoint's row: the store's per-state counters, no walk over its jobs. */
export async function endpointRow(endpoint: EndpointJobs, facts: EndpointFacts = {}): Promise<EndpointRow> {
  const [{ retained, ...counts }, health, workers] = await Promise.all([endpoint.stateCounts(), endpoint.health(), endpoint.workers.counts()]);
  const jobs = zeroCounts();
  for (const status of JOB_STATUSES) jobs[status] = counts[status];
  return {
    id: endpoint.id,
    ...(facts.name !== undefined ? { name: facts.name } : {}),
    queueDepth: jobs.IN_QUEUE,
    jobs,
    retained,
    totals: { completed: health.jobs.completed, failed: health.jobs.failed, retried: health.jobs.retried },
    workers,
    health: endpointHealth(jobs.IN_QUEUE, workers, facts.launched, facts.notLaunched),
  };
}

/** `names`: endpoint names by id (endpoints made through /v1). */
export async function endpointRows(harness: Harness, names: Readonly<Record<string, string>> = {}, launched?: LaunchedWorkersView): Promise<EndpointRow[]> {
  const rows = await Promise.all(
    [...harness.endpoints()].map(async (endpoint) =>
      endpointRow(endpoint, {
        name: names[endpoint.id],
        launched: await launched?.health(endpoint.id),
        notLaunched: launched?.notLaunchedReason?.(endpoint.id),
      }),
    ),
  );
  for (const row of rows) if (harness.createdOnUse.has(row.id)) row.createdOnUse = true;
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

/** A page of an endpoint's jobs: the store's list query (states, id search, history filters, order, page). */
export type JobsQuery = ListQuery;

export interface JobsPage {
  endpointId: string;
  /** Jobs matching the filter. */
  total: number;
  offset: number;
  limit: number;
  jobs: ListedJob[];
}

/** A job in a list: its summary, with its endpoint (the list across endpoints mixes them). */
export type ListedJob = RequestSummary & { endpointId: string };

/** Characters of an error message a jobs list carries (the job page has it all). */
const LIST_ERROR_CHARS = 300;

/** A job in a list: its summary, the worker that ran it, its error message cut short. */
export function listedJob(job: StoredJob): ListedJob {
  const summary = { ...summarizeJob(job), ...workerOf(job), endpointId: job.endpointId };
  if (summary.errorMessage !== undefined && summary.errorMessage.length > LIST_ERROR_CHARS)
    summary.errorMessage = `${summary.errorMessage.slice(0, LIST_ERROR_CHARS)}…`;
  return summary;
}

/** A page of `endpoint`'s jobs, newest first: the store pages, summaries only for the page. */
export async function jobsPage(endpoint: EndpointJobs, query: JobsQuery): Promise<JobsPage> {
  const page = await endpoint.list(query);
  return { endpointId: endpoint.id, total: page.total, offset: query.offset, limit: query.limit, jobs: page.jobs.map(listedJob) };
}

/**
 * A job for the job page: everything but its large values in full; input, output and
 * error as previews with their size, the last chunks (value-preview.ts). Small whatever
 * the job holds: a live message carries it.
 */
export interface JobDetail extends RequestSummary {
  endpointId: string;
  input: ValuePreview;
  /** Output (final, or the latest progress while running). */
  output?: ValuePreview;
  /** The structured error payload, for FAILED and TIMED_OUT jobs, its long fields cut (`errorClipped` names them). */
  error?: JobErrorPayload;
  errorClipped?: string[];
  policy?: unknown;
  /** The last chunks not yet handed out by /stream (at most VIEW_CHUNKS; earlier ones load on demand), each with its index. */
  recentChunks: ChunkPreview[];
  /** Index of the first unread chunk: chunks before it were read by a /stream client. */
  chunkBase: number;
  /** Webhook deliveries that have ended (none while under way, or with no webhook). */
  webhookDeliveries: readonly WebhookDeliveryRecord[];
  /** The job's GPU summary (in-process workers), or why there is none; absent when not asked for. */
  gpu?: JobGpuView;
  /** When the harness removes the job (ttl, or retention once it ended) and by which rule. */
  removal: JobRemoval;
  terminal: boolean;
}

/** `pendingChunks`: the job's unread chunks (EndpointJobs.peekStream); `gpu`: from the GpuJobLog. */
export function jobDetail(job: StoredJob, pendingChunks: readonly StreamChunk[], deliveries: readonly WebhookDeliveryRecord[], gpu?: JobGpuView): JobDetail {
  const chunkBase = Math.max(0, job.chunkCount - pendingChunks.length);
  const shownFrom = Math.max(0, pendingChunks.length - VIEW_CHUNKS);
  const error = job.error !== undefined ? previewError(job.error) : undefined;
  return {
    ...summarizeJob(job),
    ...workerOf(job),
    endpointId: job.endpointId,
    input: previewValue(job.request.input),
    ...(job.output !== undefined ? { output: previewValue(job.output) } : {}),
    ...(error !== undefined ? { error: error.error, ...(error.clipped.length > 0 ? { errorClipped: error.clipped } : {}) } : {}),
    ...(job.request.policy !== undefined ? { policy: job.request.policy } : {}),
    recentChunks: pendingChunks.slice(shownFrom).map((chunk, i) => previewChunk(chunkBase + shownFrom + i, chunk)),
    chunkBase,
    webhookDeliveries: deliveries,
    ...(gpu !== undefined ? { gpu } : {}),
    removal: jobRemoval(job),
    terminal: isTerminal(job.status),
  };
}

/** The worker that ran the job: the holder while it runs, else the one whose result ended it (the store clears the holder at the end). */
export function workerOf(job: StoredJob): { workerId?: string } {
  const workerId = ranOn(job);
  return workerId ? { workerId } : {};
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
  /** With a launcher: whether this harness launched it (false: joined by hand, another harness's, or left by an earlier run). */
  launched?: boolean;
  /** Jobs it finished that this harness process ended (the dashboard's worker history counts them). */
  jobsDone?: number;
}

/** `launched`: the harness's launcher, when it runs one (the rows then say which workers it started). */
export async function workerRows(harness: Harness, now: number, launched?: LaunchedWorkersView): Promise<WorkerRow[]> {
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
        ...(launched?.launched ? { launched: launched.launched(endpoint.id, worker.id) } : {}),
      });
    }
  }
  return rows;
}

/** GPU readings as the workers view shows them: the cards, or why there are none. */
export type GpuView = { available: true; gpus: GpuReading[]; at?: string } | { available: false; reason: string };

/** `hasSource`: whether the harness was given a GPU source at all. */
export function gpuView(hasSource: boolean, read: GpuReadResult | undefined): GpuView {
  if (!hasSource)
    return { available: false, reason: 'this harness has no GPU reading source (an in-process worker with GPU sampling, or the harness command)' };
  if (read === undefined) return { available: false, reason: 'no reading yet: the first is taken when a dashboard page opens' };
  if (!read.ok) return { available: false, reason: `${read.reason}: ${read.message}` };
  return { available: true, gpus: read.gpus, at: new Date(read.readAt).toISOString() };
}
