// @ts-check
// @module ui/worker-view
// One worker: its state, jobs and last heartbeat (from the overview's worker rows,
// while the harness still knows it), and its log tail, followed live.
import { CopyButton, EndpointName, When, html, duration, jobHref } from './format.js';
import { LogLines } from './logs-view.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').GpuView} GpuView
 * @typedef {import('./api-types.js').Navigate} Navigate
 */

/** @param {{ endpointId: string, workerId: string, overview: OverviewView, names: EndpointNames }} props */
export function WorkerView({ endpointId, workerId, overview, names }) {
  const row = overview.workers.find((w) => w.endpointId === endpointId && w.id === workerId);
  return html`<div>
    <h1>Worker <code data-test="worker-id">${workerId}</code> <${CopyButton} text=${workerId} what="worker id" /></h1>
    <dl class="facts">
      <dt>Endpoint</dt><dd><${EndpointName} id=${endpointId} names=${names} /></dd>
      <dt>State</dt><dd data-test="worker-state">${row ? html`<span class=${`badge w-${row.state}`}>${row.state}</span>` : html`<span class="muted">not known to the harness now (gone, or not yet heard from)</span>`}</dd>
      ${
        row
          ? html`<dt>Current jobs</dt><dd>${row.jobs.length === 0 ? '—' : row.jobs.map((id) => html`<a href=${jobHref(endpointId, id)}><code>${id}</code></a> `)}</dd>
        <dt>Last heard</dt><dd>${duration(row.silentMs)} ago</dd><dt>Since</dt><dd><${When} iso=${row.firstSeenAt} now=${overview.now ?? Date.now()} /></dd>`
          : null
      }
    </dl>
    <${LogLines} query=${{ endpoint: endpointId, worker: workerId }} follow=${true} title="Log tail" test="worker-logs"
      empty="No line from this worker: the launcher keeps the last 1 000 lines of each endpoint's workers it runs." />
  </div>`;
}
