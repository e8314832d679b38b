/**
 * @module harness/dashboard/dashboard-routes
 * The dashboard's routes (/ui), declared once (http/route-spec.ts): the plugin
 * registers from them and the tests' route list is derived from them. The page and its
 * modules need no key (they hold no data: the page asks for it); /ui/api does.
 */
import { defineRoute } from '../http/route-spec.js';

const base = { prefix: '', tag: 'dashboard' } as const;
const file = { ...base, auth: false, method: 'GET', replyDescription: 'The file.' } as const;
const read = { ...base, method: 'GET', replyDescription: 'JSON for the page.' } as const;

export const DASHBOARD_ROUTES = {
  page: defineRoute({ ...file, path: '/ui', operationId: 'ui', summary: 'The dashboard page.' }),
  static: defineRoute({ ...file, path: '/ui/static/:file', operationId: 'ui_static', summary: "One of the page's modules." }),
  vendor: defineRoute({ ...file, path: '/ui/vendor/:file', operationId: 'ui_vendor', summary: 'One of the libraries the page loads.' }),
  overview: defineRoute({ ...read, path: '/ui/api/overview', operationId: 'ui_overview', summary: 'Endpoints, workers and counts.' }),
  endpointJobs: defineRoute({ ...read, path: '/ui/api/endpoints/:endpointId/jobs', operationId: 'ui_endpoint_jobs', summary: "An endpoint's jobs." }),
  jobs: defineRoute({ ...read, path: '/ui/api/jobs', operationId: 'ui_jobs', summary: 'Jobs of every endpoint, filtered.' }),
  jobsMatching: defineRoute({ ...read, path: '/ui/api/jobs/matching', operationId: 'ui_jobs_matching', summary: 'How many jobs a filter matches.' }),
  jobsBulk: defineRoute({
    ...base,
    method: 'POST',
    path: '/ui/api/jobs/bulk',
    operationId: 'ui_jobs_bulk',
    summary: 'Cancel or retry many jobs.',
    replyDescription: 'What was done.',
  }),
  job: defineRoute({ ...read, path: '/ui/api/endpoints/:endpointId/jobs/:jobId', operationId: 'ui_job', summary: 'One job.' }),
  jobValue: defineRoute({
    ...read,
    path: '/ui/api/endpoints/:endpointId/jobs/:jobId/values/:part',
    operationId: 'ui_job_value',
    summary: "One of a job's values in full.",
  }),
  jobAttempts: defineRoute({
    ...read,
    path: '/ui/api/endpoints/:endpointId/jobs/:jobId/attempts',
    operationId: 'ui_job_attempts',
    summary: "A job's attempts.",
  }),
  scaleEvents: defineRoute({ ...read, path: '/ui/api/scale-events', operationId: 'ui_scale_events', summary: "The launcher's scale events." }),
  logs: defineRoute({ ...read, path: '/ui/api/logs', operationId: 'ui_logs', summary: 'Log lines of workers and jobs.' }),
  /** Server-sent events: open until the page leaves. */
  events: defineRoute({ ...read, path: '/ui/api/events', operationId: 'ui_events', summary: 'Live changes, as server-sent events.' }),
};

export const DASHBOARD_API_ROUTES = Object.freeze(Object.values(DASHBOARD_ROUTES));
