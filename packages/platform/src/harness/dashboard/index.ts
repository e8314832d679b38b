/**
 * @module harness/dashboard
 * The web dashboard at `/ui`: a fastify plugin the harness server registers with a
 * dynamic import, so that neither the worker's platform path nor a server without the
 * dashboard loads it. See routes.ts for the routes and live-hub.ts for live updates.
 * Layer: harness feature (docs/architecture.md): owns the /ui routes and their domain code (attempt log, live hub, series); reads the other features' views.
 */
import type { FastifyInstance } from 'fastify';
import type { Harness } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { LiveHub } from './live-hub.js';
import { registerDashboardRoutes, type DashboardRouteContext } from './routes.js';
import type { DashboardSettings } from './settings.js';
import { StaticFiles } from './static-files.js';
import type { WebhookLog } from './webhook-log.js';
import type { AttemptLog } from './attempt-log.js';
import { GpuJobLog, bindGpuJobLog } from './gpu-job-log.js';
import { WorkerHistory } from './worker-history.js';

export { LiveHub, sseFrame } from './live-hub.js';
export { Series, percentile, type SeriesPoint } from './series.js';
export { DashboardSettingsSchema, type DashboardSettings, type DashboardPanel, type DashboardGpuSource } from './settings.js';
export { StaticFiles, UI_DIR } from './static-files.js';
export { endpointRow, endpointRows, jobsPage, jobDetail, workerRows, type JobsPage, type JobDetail, type EndpointRow, type ListedJob } from './views.js';
export {
  allJobsPage,
  matchingJobs,
  applyBulk,
  ALL_JOBS_MAX_OFFSET,
  BULK_MAX_JOBS,
  type AllJobsPage,
  type MatchingJobs,
  type BulkOutcome,
  type JobRef,
} from './all-jobs.js';
export { WebhookLog, type WebhookDeliveryRecord } from './webhook-log.js';
export { builtInPanels } from './built-in-panels.js';
export { AttemptLog, ATTEMPT_LOG_LIMITS, type AttemptEntry, type AttemptOutcome, type JobAttempts, type JobAttemptFacts } from './attempt-log.js';
export { jobAttemptsView, type AttemptView, type JobAttemptsView } from './attempt-view.js';
export { bindAttemptLog, withAttemptEvents } from './attempt-binding.js';
export { inputExample } from './input-example.js';
export { JobLogBuffer, tapJobLogs, JOB_LOG_LIMITS, type JobLogLine } from './job-log-tap.js';
export {
  previewValue,
  previewChunk,
  previewError,
  PREVIEW_CHARS,
  CHUNK_PREVIEW_CHARS,
  VIEW_CHUNKS,
  type ValuePreview,
  type ChunkPreview,
} from './value-preview.js';
export { GpuJobLog, bindGpuJobLog, GPU_JOB_LOG_LIMIT, type JobGpuView } from './gpu-job-log.js';
export { WorkerHistory, DEPARTED_LIMIT, type DepartedWorker } from './worker-history.js';
export type { LiveEvents, LiveSnapshot, OverviewView, PanelView, ScaleEventsView, ScaleEventView, LogsView, LogLineView, ChunkValues } from './page-views.js';

export interface DashboardOptions {
  readonly harness: Harness;
  readonly settings: DashboardSettings;
  readonly webhookLog: WebhookLog;
  /** Each job's attempts (attempt-log.ts). */
  readonly attemptLog: AttemptLog;
  /** Endpoints' input schemas (the submit form's example where there is no test input); default none. */
  readonly endpointInputs?: DashboardRouteContext['endpointInputs'];
  /** Whether the server checks an API key (the page then asks for it). */
  readonly authenticated: boolean;
  readonly version: string;
  /** Endpoint names by id (the management API's endpoints); default none: ids alone. */
  readonly endpointNames?: () => Promise<Readonly<Record<string, string>>>;
  /** Workers the harness runs itself (the launcher); default none. */
  readonly launchedWorkers?: LaunchedWorkersView | undefined;
}

/** The least time between two samples of the workers present (worker-history.ts) while no page is open. */
const WORKER_SAMPLE_MS = 5_000;

/** Register the dashboard on `app`; answers its live hub (the server closes it before closing). */
export function registerDashboard(app: FastifyInstance, options: DashboardOptions): LiveHub {
  const onReading = options.settings.gpu?.onReading?.bind(options.settings.gpu);
  const gpuJobLog = new GpuJobLog({ fed: onReading !== undefined });
  const unbindGpu = onReading ? bindGpuJobLog(options.harness, gpuJobLog, onReading, options.settings.localWorkers) : () => {};
  // Sampled page open or not (workers that leave while nobody looks are still listed), at most
  // every WORKER_SAMPLE_MS: on PostgreSQL each sample is a read per endpoint. An open page's ticks sample too.
  const workerHistory = new WorkerHistory(options.harness);
  workerHistory.start(Math.max(options.settings.sampleIntervalMs, WORKER_SAMPLE_MS));
  const hub = new LiveHub({
    harness: options.harness,
    workerHistory,
    settings: options.settings,
    webhookLog: options.webhookLog,
    gpuJobLog,
    ...(options.endpointNames ? { endpointNames: options.endpointNames } : {}),
    launchedWorkers: options.launchedWorkers,
  });
  registerDashboardRoutes(app, { ...options, hub, gpuJobLog, files: new StaticFiles() });
  // Open event streams would keep app.close() waiting: end them first.
  app.addHook('preClose', (done) => {
    unbindGpu();
    workerHistory.stop();
    hub.close();
    done();
  });
  return hub;
}
