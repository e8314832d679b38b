// @ts-check
// @module ui/workers-view
// Workers the harness has seen: state, current jobs, last heartbeat, jobs done; those that
// left (who was connected, and when last); GPU readings
// where the harness has a reading source; the launcher's scale events.
import { EndpointName, When, bytes, duration, endpointNames, html, jobHref, workerHref } from './format.js';
import { ScaleEvents } from './scale-events-view.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').GpuView} GpuView
 * @typedef {import('./api-types.js').Navigate} Navigate
 * @typedef {import('./api-types.js').DepartedWorker} DepartedWorker
 */

/** @param {{ gpu: GpuView }} props */
function Gpus({ gpu }) {
  if (!gpu.available) return html`<p class="muted" data-test="no-gpu">No GPU readings (${gpu.reason}).</p>`;
  return html`<table class="grid" data-test="gpus"><caption>GPUs</caption>
    <thead><tr><th>#</th><th>Name</th><th class="num">Utilisation</th><th class="num">Memory used / total</th><th class="num">Temperature</th><th class="num">Power</th></tr></thead>
    <tbody>${gpu.gpus.map(
      (g) => html`<tr><td>${g.index}</td><td>${g.name}</td>
      <td class="num">${g.utilizationPercent ?? '—'}${g.utilizationPercent === null ? '' : ' %'}</td>
      <td class="num">${bytes(g.memoryUsedBytes)} / ${bytes(g.memoryTotalBytes)}</td>
      <td class="num">${g.temperatureCelsius ?? '—'}${g.temperatureCelsius === null ? '' : ' °C'}</td>
      <td class="num">${g.powerDrawWatts ?? '—'}${g.powerDrawWatts === null ? '' : ' W'}</td></tr>`,
    )}</tbody></table>`;
}

/**
 * Workers that were connected and have left (launched workers scaled to 0, a worker that
 * stopped): who, on which endpoint, when first and last heard from, and the jobs each did.
 */
/** @param {{ departed: DepartedWorker[], names: EndpointNames, now: number }} props */
function DepartedWorkers({ departed, names, now }) {
  if (departed.length === 0) return null;
  return html`<table class="grid" data-test="departed-workers"><caption>Workers that left (the last ${departed.length}, most recent first; kept while the harness runs)</caption>
    <thead><tr><th>Worker</th><th>Endpoint</th><th>First seen</th><th>Last heard</th><th class="num">Jobs done</th></tr></thead>
    <tbody>${departed.map(
      (w) => html`<tr data-test="departed-row"><td><code>${w.id}</code></td><td><${EndpointName} id=${w.endpointId} names=${names} /></td>
      <td class="nowrap"><${When} iso=${w.firstSeenAt} now=${now} /></td><td class="nowrap"><${When} iso=${w.lastSeenAt} now=${now} test="departed-last-seen" /></td>
      <td class="num" data-test="departed-jobs">${w.jobsDone}</td></tr>`,
    )}</tbody></table>`;
}

/** No worker now: say whether one ever was, and when the last was heard from. */
/** @param {{ departed: DepartedWorker[], now: number }} props */
function NoWorkerNow({ departed, now }) {
  const last = departed.reduce((/** @type {DepartedWorker | undefined} */ latest, w) => (!latest || w.lastSeenAt > latest.lastSeenAt ? w : latest), undefined);
  if (!last) return html`<p class="muted" data-test="no-workers">No worker has reached the harness yet.</p>`;
  const jobs = departed.reduce((sum, w) => sum + w.jobsDone, 0);
  return html`<p class="muted" data-test="no-workers">No worker is connected now. ${departed.length} ${departed.length === 1 ? 'worker was' : 'workers were'} connected
    (${jobs} ${jobs === 1 ? 'job' : 'jobs'} done); the last, <code>${last.id}</code>, was heard from <${When} iso=${last.lastSeenAt} now=${now} test="last-worker-seen" />.</p>`;
}

/** @param {{ overview: OverviewView }} props */
export function WorkersView({ overview }) {
  const { workers, gpu } = overview;
  const departed = overview.departedWorkers ?? [];
  const now = overview.now ?? Date.now();
  const names = endpointNames(overview.endpoints);
  return html`<div>
    <h1>Workers</h1>
    ${
      workers.length === 0
        ? html`<${NoWorkerNow} departed=${departed} now=${now} />`
        : html`<table class="grid" data-test="workers"><caption>Workers (each worker seen over the worker API or in process)</caption>
        <thead><tr><th>Worker</th><th>Endpoint</th><th>State</th><th>Current jobs</th><th class="num">Last heard</th><th>Since</th><th class="num">Jobs done</th></tr></thead>
        <tbody>${workers.map(
          (
            w,
          ) => html`<tr data-test="worker-row"><td><a href=${workerHref(w.endpointId, w.id)}><code>${w.id}</code></a></td><td><${EndpointName} id=${w.endpointId} names=${names} /></td>
          <td><span class=${`badge w-${w.state}`}>${w.state}</span>${
            w.launched === false
              ? html` <span class="badge w-foreign" data-test="not-launched" title="This harness's launcher did not start it: it joined by hand, belongs to another harness on the database, or was left by an earlier run of this harness">not launched here</span>`
              : ''
          }</td>
          <td>${w.jobs.map((id) => html`<a href=${jobHref(w.endpointId, id)}><code>${id}</code></a> `)}</td>
          <td class="num">${duration(w.silentMs)} ago</td><td class="nowrap"><${When} iso=${w.firstSeenAt} now=${now} /></td>
          <td class="num">${w.jobsDone ?? '—'}</td></tr>`,
        )}</tbody></table>`
    }
    <${DepartedWorkers} departed=${departed} names=${names} now=${now} />
    <${Gpus} gpu=${gpu} />
    <${ScaleEvents} overview=${overview} />
  </div>`;
}
