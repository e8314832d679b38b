// @module ui/overview-view
// The first view: every endpoint with its queue depth, jobs by state and workers by
// state, the submit form, the charts, and panels other parts of the harness add
// (panels-view.js).
import { ActionButton, SubmitForm, actions } from './actions.js';
import { Charts } from './charts.js';
import { STATES, endpointHref, html } from './format.js';
import { Panels } from './panels-view.js';

export function EndpointsTable({ endpoints }) {
  if (endpoints.length === 0) {
    return html`<p class="muted" data-test="no-endpoints">No endpoint yet: submit a job below (any endpoint id works unless the harness was started with --endpoint).</p>`;
  }
  return html`<table class="grid" data-test="endpoints">
    <caption>Endpoints</caption>
    <thead><tr><th scope="col">Endpoint</th><th scope="col">Queue</th>
      ${STATES.map((s) => html`<th scope="col" class="num">${s}</th>`)}
      <th scope="col">Workers idle / running</th><th scope="col">Actions</th></tr></thead>
    <tbody>${endpoints.map((e) => html`<tr data-test="endpoint-row">
      <th scope="row"><a href=${endpointHref(e.id)}>${e.id}</a>${e.createdOnUse ? html` <span class="muted" data-test="created-on-use" title="Made by the first job or worker that named it: check the id if you did not mean to create it">created on first use</span>` : null}</th>
      <td class="num" data-test="queue-depth">${e.queueDepth}</td>
      ${STATES.map((s) => html`<td class="num">${e.jobs[s]}</td>`)}
      <td>${e.workers.idle} / ${e.workers.running}</td>
      <td><${ActionButton} label="Purge queue" test="purge" confirmText=${`Remove every queued job of ${e.id}?`}
        run=${() => actions.purge(e.id)} describe=${(a) => `Removed ${a?.removed ?? 0} queued jobs`} /></td>
    </tr>`)}</tbody>
  </table>`;
}

export function OverviewView({ overview, navigate }) {
  return html`<div>
    <section class="card"><${EndpointsTable} endpoints=${overview.endpoints} /></section>
    <${Panels} panels=${overview.panels} />
    <${SubmitForm} endpoints=${overview.endpoints} overview=${overview} navigate=${navigate} />
    <section aria-label="Charts"><h2>Last minutes</h2><${Charts} points=${overview.series} /></section>
  </div>`;
}
