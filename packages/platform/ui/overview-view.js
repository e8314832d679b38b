// @ts-check
// @module ui/overview-view
// The first view: every endpoint with its queue depth, jobs by state and workers by
// state, the charts, panels other parts of the harness add (panels-view.js), and the
// submit form.
import { ActionButton, SubmitForm, actions } from './actions.js';
import { Charts } from './charts.js';
import { EndpointName, HealthBadge, STATES, endpointNames, html } from './format.js';
import { Panels } from './panels-view.js';
import { endpointLabel } from './bulk-outcome.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').GpuView} GpuView
 * @typedef {import('./api-types.js').Navigate} Navigate
 * @typedef {import('./api-types.js').SeriesPoint} SeriesPoint
 */

/** Window of the overview's jobs per second: the last minute of chart points. */
const RATE_WINDOW_MS = 60_000;

/**
 * Each endpoint's jobs ended per second over the last minute of `points` (the chart's),
 * undefined while there are none.
 * @param {readonly SeriesPoint[]} points @returns {Record<string, number> | undefined}
 */
export function recentRates(points) {
  const last = points.at(-1);
  if (!last) return undefined;
  const recent = points.filter((p) => p.t > last.t - RATE_WINDOW_MS);
  /** @type {Record<string, number>} */
  const sums = {};
  for (const p of recent) for (const [id, f] of Object.entries(p.endpoints ?? {})) sums[id] = (sums[id] ?? 0) + f.jobsPerSecond;
  return Object.fromEntries(Object.entries(sums).map(([id, sum]) => [id, sum / recent.length]));
}

/** @param {number | undefined} v */
const perSecond = (v) => (v === undefined || v === 0 ? '0' : v >= 10 ? String(Math.round(v)) : v.toFixed(2));

/** @param {{ endpoints: EndpointRow[], rates?: Record<string, number> | undefined }} props */
export function EndpointsTable({ endpoints, rates }) {
  if (endpoints.length === 0) {
    return html`<p class="muted" data-test="no-endpoints">No endpoint yet: submit a job below (any endpoint id works unless the harness was started with --endpoint).</p>`;
  }
  const names = endpointNames(endpoints);
  return html`<table class="grid" data-test="endpoints">
    <caption>Endpoints</caption>
    <thead><tr><th scope="col" colspan="2"></th>
        <th scope="colgroup" colspan=${STATES.length} class="group" title="ended jobs leave when their retention ends (30 min after /run, 1 min after /runsync), so these counts fall">Jobs kept now, by state</th>
        <th scope="colgroup" colspan="3" class="group" title="/health's counts: since the endpoint was created">Since created (/health)</th><th colspan="3"></th></tr>
      <tr><th scope="col">Endpoint</th><th scope="col">Health</th>
      ${STATES.map((s) => html`<th scope="col" class="num state-col">${s}</th>`)}
      <th scope="col" class="num">completed</th><th scope="col" class="num">failed</th><th scope="col" class="num">retried</th>
      <th scope="col" class="num" title="jobs ended per second, averaged over the last minute of the charts">Jobs/s (last min)</th>
      <th scope="col">Workers idle / running</th><th scope="col">Actions</th></tr></thead>
    <tbody>${endpoints.map(
      (e) => html`<tr data-test="endpoint-row">
      <th scope="row"><${EndpointName} id=${e.id} names=${names} />${e.createdOnUse ? html` <span class="muted" data-test="created-on-use" title="Made by the first job or worker that named it: check the id if you did not mean to create it">created on first use</span>` : null}</th>
      <td><${HealthBadge} health=${e.health} /></td>
      ${STATES.map((s) => html`<td class="num" data-test=${s === 'IN_QUEUE' ? 'queue-depth' : undefined}>${e.jobs[s]}</td>`)}
      <td class="num" data-test="total-completed">${e.totals?.completed ?? '—'}</td><td class="num">${e.totals?.failed ?? '—'}</td><td class="num">${e.totals?.retried ?? '—'}</td>
      <td class="num" data-test="jobs-per-second">${rates ? perSecond(rates[e.id]) : '—'}</td>
      <td>${e.workers.idle} / ${e.workers.running}</td>
      <td><${ActionButton} label="Purge queue" test="purge" kind="small" confirmText=${`Remove every queued job of endpoint ${endpointLabel(e.id, names)} (${e.queueDepth} now)?`}
        run=${() => actions.purge(e.id)} describe=${(/** @type {{ removed: number }} */ a) => `Removed ${a.removed} queued jobs`} /></td>
    </tr>`,
    )}</tbody>
  </table>
  <p class="hint">Jobs kept now: what the harness still holds (ended jobs leave when their retention ends); since created: /health's totals, which expiry does not lower.</p>`;
}

/**
 * The endpoints, then the charts (in the first screen at 1440×900: they were below the
 * panels and the submit form), then the panels and the form. `seriesReady`: whether the
 * charts hold the harness's history yet (until then they say they are loading, not flat).
 */
/** @param {{ overview: OverviewView, navigate: Navigate, seriesReady?: boolean }} props */
export function OverviewView({ overview, navigate, seriesReady = true }) {
  return html`<div>
    <section class="card"><${EndpointsTable} endpoints=${overview.endpoints} rates=${seriesReady ? recentRates(overview.series) : undefined} /></section>
    <section aria-label="Charts" data-test="charts"><h2>Last minutes</h2>
      ${
        seriesReady
          ? html`<${Charts} points=${overview.series} endpoints=${overview.endpoints} historyMinutes=${overview.historyMinutes ?? 10} />`
          : html`<p class="muted loading" aria-busy="true" data-test="charts-loading">Loading the chart history…</p>`
      }</section>
    <${Panels} panels=${overview.panels} names=${endpointNames(overview.endpoints)} />
    <${SubmitForm} endpoints=${overview.endpoints} overview=${overview} navigate=${navigate} />
  </div>`;
}
