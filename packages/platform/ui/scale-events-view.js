// @ts-check
// @module ui/scale-events-view
// The launcher's scale events on the workers view: the launched workers of each
// endpoint over time (a step chart: each event carries the endpoint's worker processes
// after it) and the events themselves, newest first (scale up, ready, scale down,
// exit, crash with its backoff, unhealthy, healthy, throttled). Read from
// /ui/api/scale-events when the launcher panel's event count moves.
import { useEffect, useState } from 'preact/hooks';
import { views } from './api.js';
import { Chart } from './charts.js';
import { EndpointName, ErrorBox, When, endpointNames, html, workerHref } from './format.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').ScaleEventsView} ScaleEventsView
 * @typedef {import('./api-types.js').ScaleEventView} ScaleEventView
 * @typedef {import('./api-types.js').ShownError} ShownError
 */

const SHOWN = 100;

/** @type {Readonly<Record<string, string>>} */
const KIND_CLASS = {
  'scale-up': 's-IN_PROGRESS',
  ready: 's-COMPLETED',
  healthy: 's-COMPLETED',
  'scale-down': 's-CANCELLED',
  exit: 's-CANCELLED',
  crash: 's-FAILED',
  unhealthy: 's-FAILED',
  throttled: 's-IN_QUEUE',
};

/** [times, one column per endpoint]: each endpoint's worker count carried forward from its last event, up to `now`. */
/**
 * @param {ScaleEventView[]} events
 * @param {number} now epoch ms
 * @returns {{ endpoints: string[], columns: Array<Array<number | null>> }}
 */
function workerColumns(events, now) {
  const endpoints = [...new Set(events.map((e) => e.endpointId))].sort();
  const times = [...events.map((e) => e.at), now].map((t) => t / 1000);
  /** @type {Map<string, number>} */
  const last = new Map();
  const columns = endpoints.map(() => /** @type {Array<number | null>} */ ([]));
  events.forEach((e) => {
    last.set(e.endpointId, e.workers);
    endpoints.forEach((id, i) => columns[i]?.push(last.get(id) ?? null));
  });
  endpoints.forEach((id, i) => columns[i]?.push(last.get(id) ?? null));
  return { endpoints, columns: [times, ...columns] };
}

/**
 * Each distinct stderr tail once: a crash loop repeats the same tail on every event (55
 * crashes made a 9 000 px page), so the newest event with a tail shows it, open, and the
 * older ones with the same tail point to it.
 * @param {ScaleEventView[]} shown newest first
 * @returns {Array<{ event: ScaleEventView, tail: 'shown' | 'same' | 'none', sameAs?: ScaleEventView }>}
 */
export function withTails(shown) {
  /** @type {Map<string, ScaleEventView>} */
  const first = new Map();
  return shown.map((event) => {
    if (!event.stderr?.length) return { event, tail: /** @type {const} */ ('none') };
    const key = event.stderr.join('\n');
    const earlier = first.get(key);
    if (earlier) return { event, tail: /** @type {const} */ ('same'), sameAs: earlier };
    first.set(key, event);
    return { event, tail: /** @type {const} */ ('shown') };
  });
}

/** @param {{ overview: OverviewView }} props */
export function ScaleEvents({ overview }) {
  const panel = overview.panels?.find((p) => p.id === 'launcher');
  const data = /** @type {import('./api-types.js').LauncherPanelData | undefined} */ (panel?.data);
  const revision = typeof data === 'object' ? data.scaleEvents : -1;
  const [answer, setAnswer] = useState(/** @type {ScaleEventsView | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  useEffect(() => {
    let stale = false;
    views
      .scaleEvents(1000)
      .then((a) => {
        if (!stale) {
          setAnswer(a);
          setError(undefined);
        }
      })
      .catch((e) => {
        if (!stale) setError(e);
      });
    return () => {
      stale = true;
    };
  }, [revision]);
  if (error) return html`<section class="card"><h2>Launcher scale events</h2><${ErrorBox} error=${error} /></section>`;
  if (!answer) return null;
  if (!answer.launcher) {
    return html`<section class="card" data-test="scale-events"><h2>Launcher scale events</h2>
      <p class="muted">The launcher is off: start the harness with --image NAME=COMMAND to have it run and scale workers.</p></section>`;
  }
  const events = answer.events;
  const names = endpointNames(overview.endpoints);
  // The steps reach to now (never before the last event: the x values must grow).
  const { endpoints, columns } = workerColumns(events, Math.max(overview.now ?? 0, events.at(-1)?.at ?? 0, Date.now()));
  const chartNames = endpoints.map((id) => (names[id] ? `${names[id]} (${id})` : id));
  return html`<section class="card" data-test="scale-events">
    <h2>Launcher scale events</h2>
    ${
      events.length === 0
        ? html`<p class="muted">No scale event yet: the launcher starts workers for endpoints whose template image it was given.</p>`
        : html`<${Chart} title="Launched workers (processes, stopping ones included)" unit="workers" names=${chartNames} columns=${columns} stepped=${true} test="chart-launched" />
        <table class="grid" data-test="scale-events-table"><caption>Last ${Math.min(SHOWN, events.length)} of ${events.length} events, newest first (the launcher keeps the last 500 per endpoint)</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Endpoint</th><th scope="col">Event</th><th scope="col">Worker</th><th scope="col">What happened</th><th scope="col" class="num">Workers after</th></tr></thead>
          <tbody>${withTails(events.slice(-SHOWN).reverse()).map(
            ({ event: e, tail, sameAs }) => html`<tr data-test="scale-event">
            <td class="nowrap"><${When} iso=${new Date(e.at).toISOString()} now=${overview.now ?? Date.now()} /></td><td><${EndpointName} id=${e.endpointId} names=${names} /></td>
            <td><span class=${`badge ${KIND_CLASS[e.kind] ?? ''}`} data-test="scale-event-kind">${e.kind}</span></td>
            <td class="nowrap">${e.workerId ? html`<a href=${workerHref(e.endpointId, e.workerId)}><code>${e.workerId}</code></a>` : '—'}</td>
            <td>${e.message}${e.requeued?.length ? html` <span class="muted">(requeued ${e.requeued.length} jobs)</span>` : null}
              ${
                tail === 'shown'
                  ? html`<details class="stderr-tail" open><summary class="muted">the worker's last ${e.stderr?.length} stderr lines</summary>
                    <pre class="log log-stderr" data-test="scale-event-stderr">${e.stderr?.join('\n')}</pre></details>`
                  : tail === 'same' && sameAs
                    ? html` <span class="muted" data-test="scale-event-stderr-same">(stderr: the same ${e.stderr?.length} lines as the event of <${When} iso=${new Date(sameAs.at).toISOString()} now=${overview.now ?? Date.now()} ms=${true} /> above)</span>`
                    : null
              }</td>
            <td class="num">${e.workers}</td></tr>`,
          )}</tbody></table>`
    }
  </section>`;
}
