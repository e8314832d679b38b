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

/** Register the dashboard on `app`; answers its live hub (the server closes it before closing). */
export function registerDashboard(app: FastifyInstance, options: DashboardOptions): LiveHub {
  const onReading = options.settings.gpu?.onReading?.bind(options.settings.gpu);
  const gpuJobLog = new GpuJobLog({ fed: onReading !== undefined });
  const unbindGpu = onReading ? bindGpuJobLog(options.harness, gpuJobLog, onReading, options.settings.localWorkers) : () => {};
  const hub = new LiveHub({
    harness: options.harness,
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
    hub.close();
    done();
  });
  return hub;
}
