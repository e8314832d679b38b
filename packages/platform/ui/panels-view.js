// @ts-check
// @module ui/panels-view
// The overview's panels, as tables: the load-balancing pools (each worker's /ping
// state, requests in flight against its concurrency, requests served, cold start, last
// error; the workers gone lately: forgotten when unhealthy too long, or removed) and the launcher (/health counts per endpoint, its worker processes). A panel
// another part of the harness adds is shown by its data's shape: a list of records as
// a table, a record as a list of facts, a sentence as text.
import { EndpointName, When, duration, html, jobHref, workerHref } from './format.js';

/**
 * @typedef {import('./api-types.js').PanelView} PanelView
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').LoadBalancingPanelData} LoadBalancingPanelData
 * @typedef {import('./api-types.js').LauncherPanelData} LauncherPanelData
 */

/** @type {Readonly<Record<string, string>>} */
const STATE_CLASS = { healthy: 'w-idle', idle: 'w-idle', running: 'w-running', initializing: 's-IN_QUEUE', stopping: 's-CANCELLED', unhealthy: 's-FAILED' };

/** @param {{ state: string }} props */
function State({ state }) {
  return html`<span class=${`badge ${STATE_CLASS[state] ?? ''}`}>${state}</span>`;
}

/** A value in a cell: text as it is, a number, or compact JSON for anything else. */
/** @param {unknown} value */
function cell(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** @param {{ data: LoadBalancingPanelData }} props */
function LoadBalancing({ data }) {
  if (!Array.isArray(data)) return html`<p class="muted">${cell(data)}</p>`;
  return data.map(
    (pool) => html`<table class="grid" data-test="lb-pool">
    <caption>${pool.endpointId}: ${pool.counts.idle} idle, ${pool.counts.running} running, ${pool.counts.initializing} initializing, ${pool.counts.unhealthy} unhealthy</caption>
    <thead><tr><th scope="col">Worker</th><th scope="col">State</th><th scope="col" class="num">In flight / concurrency</th><th scope="col" class="num">Requests</th>
      <th scope="col" class="num">Cold start</th><th scope="col">Address</th><th scope="col">Last error</th></tr></thead>
    <tbody>${pool.workers.map(
      (w) => html`<tr data-test="lb-worker"><td><code>${w.id}</code></td><td><${State} state=${w.state} /></td>
      <td class="num">${w.inFlight} / ${w.concurrency}</td><td class="num">${w.requests}</td><td class="num">${duration(w.coldStartMs)}</td>
      <td><code>${w.url}</code></td><td class="err" title=${w.lastError ?? ''}>${w.lastError ?? ''}</td></tr>`,
    )}
      ${(pool.gone ?? [])
        .slice()
        .reverse()
        .map(
          (w) => html`<tr data-test="lb-gone" class="gone"><td><code>${w.id}</code></td>
        <td><span class="badge s-CANCELLED" title=${w.reason}>gone</span> <${When} iso=${w.at} now=${Date.now()} /></td><td colspan="3">${w.reason}</td>
        <td><code>${w.url}</code></td><td class="err" title=${w.lastError ?? ''}>${w.lastError ?? ''}</td></tr>`,
        )}</tbody>
  </table>`,
  );
}

/** @param {{ data: LauncherPanelData, names: EndpointNames }} props */
function Launcher({ data, names }) {
  if (typeof data !== 'object' || data === null) return html`<p class="muted">${cell(data)}</p>`;
  const health = Object.entries(data.health ?? {});
  return html`<div>
    <p class="muted">${data.scaleEvents} scale events so far (the Workers view lists them).</p>
    ${
      health.length === 0
        ? html`<p class="muted">No launched endpoint yet.</p>`
        : html`<table class="grid" data-test="launcher-health">
      <caption>/health per endpoint</caption>
      <thead><tr><th scope="col">Endpoint</th><th scope="col">Healthy</th><th scope="col" class="num">Initializing</th><th scope="col" class="num">Idle</th>
        <th scope="col" class="num">Running</th><th scope="col" class="num">Throttled</th><th scope="col" class="num">Stopping</th></tr></thead>
      <tbody>${health.map(
        ([id, h]) => html`<tr data-test="launcher-endpoint"><th scope="row"><${EndpointName} id=${id} names=${names} /></th>
        <td>${h === undefined || h === null ? '—' : h.healthy ? 'yes' : html`<span class="badge s-FAILED" title=${h.unhealthyReason ?? ''}>no</span> ${h.unhealthyReason ?? ''}`}</td>
        <td class="num">${h?.initializing ?? '—'}</td><td class="num">${h?.idle ?? '—'}</td><td class="num">${h?.running ?? '—'}</td>
        <td class="num">${h?.throttled ?? '—'}</td><td class="num">${h?.stopping ?? '—'}</td></tr>`,
      )}</tbody></table>`
    }
    ${
      (data.workers ?? []).length === 0
        ? null
        : html`<table class="grid" data-test="launcher-workers">
      <caption>Worker processes</caption>
      <thead><tr><th scope="col">Worker</th><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col">GPU</th><th scope="col">Jobs</th><th scope="col">Since</th></tr></thead>
      <tbody>${data.workers.map(
        (
          w,
        ) => html`<tr data-test="launcher-worker"><td>${w.endpointId ? html`<a href=${workerHref(w.endpointId, w.id)} data-test="launcher-worker-link"><code>${w.id}</code></a>` : html`<code>${w.id}</code>`}</td><td>${w.endpointId ? html`<${EndpointName} id=${w.endpointId} names=${names} />` : '—'}</td>
        <td>${w.state ? html`<${State} state=${w.state} />` : '—'}</td><td>${w.gpu ? `${w.gpu.count} × ${w.gpu.typeId}` : 'CPU'}</td>
        <td>${(w.jobs ?? []).map((id) => (w.endpointId ? html`<a href=${jobHref(w.endpointId, id)}><code>${id}</code></a> ` : html`<code>${id}</code> `))}</td>
        <td class="nowrap"><${When} iso=${w.since} now=${Date.now()} /></td></tr>`,
      )}</tbody></table>`
    }
  </div>`;
}

/** Any other panel: by the shape of its data. */
/** @param {{ data: unknown }} props */
function Generic({ data }) {
  if (Array.isArray(data) && data.length > 0 && data.every((row) => typeof row === 'object' && row !== null && !Array.isArray(row))) {
    const keys = [...new Set(data.flatMap((row) => Object.keys(row)))];
    return html`<table class="grid"><thead><tr>${keys.map((k) => html`<th scope="col">${k}</th>`)}</tr></thead>
      <tbody>${data.map((row) => html`<tr>${keys.map((k) => html`<td>${cell(row[k])}</td>`)}</tr>`)}</tbody></table>`;
  }
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    return html`<dl class="facts">${Object.entries(data).map(([k, v]) => html`<dt>${k}</dt><dd>${cell(v)}</dd>`)}</dl>`;
  }
  return html`<p class="muted">${Array.isArray(data) && data.length === 0 ? 'none' : cell(data)}</p>`;
}

/** @type {Readonly<Record<string, (props: { data: any, names: EndpointNames }) => unknown>>} the panel's data as its id says (built-in-panels.ts) */
const RENDERERS = { 'load-balancing': LoadBalancing, launcher: Launcher };

/**
 * Why a panel could not be read: its data is `{ error }` alone when its snapshot threw (live-hub.ts).
 * @param {unknown} data
 */
function panelError(data) {
  return data && typeof data === 'object' && 'error' in data && Object.keys(data).length === 1 ? String(data.error) : undefined;
}

/** `names`: endpoint names by id (format.js endpointNames). */
/** @param {{ panels: PanelView[] | undefined, names: EndpointNames }} props */
export function Panels({ panels, names }) {
  if (!panels || panels.length === 0) return null;
  return panels.map((p) => {
    const failed = panelError(p.data);
    const View = RENDERERS[p.id] ?? Generic;
    return html`<section class="card" data-test=${`panel-${p.id}`}><h2>${p.title}</h2>
      ${failed === undefined ? html`<${View} data=${p.data} names=${names} />` : html`<p class="error" role="alert">This panel could not be read: ${failed}</p>`}</section>`;
  });
}
