// @module ui/api-types
// Types only (never served): what the harness's dashboard routes answer, as the server
// declares them, for the JSDoc types of ui/*.js (`@typedef {import('./api-types.js').X} X`).
// tsconfig.ui.json checks the page against them: a field renamed on the server fails
// `npm run typecheck`.
export type { EndpointRow, EndpointHealth, JobDetail, JobsPage, ListedJob, WorkerRow, GpuView } from '../src/harness/dashboard/views.js';
export type { AllJobsPage, MatchingJobs, BulkOutcome, JobRef } from '../src/harness/dashboard/all-jobs.js';
export type { RequestSummary } from '../src/harness/queue-api/requests-route.js';
export type { JobAttemptsView, AttemptView } from '../src/harness/dashboard/attempt-view.js';
export type { ValuePreview, ChunkPreview } from '../src/harness/dashboard/value-preview.js';
export type { SeriesPoint, JobFigures } from '../src/harness/dashboard/series.js';
export type { JobGpuView } from '../src/harness/dashboard/gpu-job-log.js';
export type { DepartedWorker } from '../src/harness/dashboard/worker-history.js';
export type { LoadBalancingPanelData, LauncherPanelData } from '../src/harness/dashboard/built-in-panels.js';
export type {
  ChunkValues,
  LiveEvents,
  LiveEventName,
  LiveSnapshot,
  LogsView,
  OverviewView,
  PanelView,
  ScaleEventsView,
  ScaleEventView,
} from '../src/harness/dashboard/page-views.js';
export type { JobStatus } from '../../../src/job/index.js';

/** One message of the live event stream: its name and that event's data. */
export type LiveMessage = {
  [E in import('../src/harness/dashboard/page-views.js').LiveEventName]: { event: E; data: import('../src/harness/dashboard/page-views.js').LiveEvents[E] };
}[import('../src/harness/dashboard/page-views.js').LiveEventName];

/** What the event stream said about the watched job (app.js keeps it, job-view.js shows it). */
export interface LiveJob {
  job: import('../src/harness/dashboard/views.js').JobDetail | undefined;
  chunks: import('../src/harness/dashboard/value-preview.js').ChunkPreview[];
  missed: number;
  skipped: number;
  gone: boolean;
}

/** An error as ErrorBox shows it: an ApiError, or one the page makes ({ code, message }). */
export interface ShownError {
  message: string;
  code?: string;
  status?: number;
  details?: unknown;
}

/** Endpoint names by id (format.js endpointNames). */
export type EndpointNames = Readonly<Record<string, string>>;

/** A route's change of the page's hash (app.js). */
export type Navigate = (href: string) => void;
