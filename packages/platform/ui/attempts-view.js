// @ts-check
// @module ui/attempts-view
// A job's attempts on the job page: the current attempt, retries, times lost, and each
// attempt the harness recorded (which worker took it, when, how it ended, posts of it
// refused as stale). Read from /ui/api/.../attempts whenever the job's state moves.
import { useEffect, useState } from 'preact/hooks';
import { views } from './api.js';
import { ErrorBox, When, duration, html, whenText, workerHref } from './format.js';

/**
 * @typedef {import('./api-types.js').JobAttemptsView} JobAttemptsView
 * @typedef {import('./api-types.js').RequestSummary} RequestSummary
 * @typedef {import('./api-types.js').ShownError} ShownError
 */

/** @type {Readonly<Record<string, string>>} */
const OUTCOME_TEXT = {
  running: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'timed out',
  CANCELLED: 'cancelled',
  requeued: 'requeued',
};

/** @type {Readonly<Record<string, string>>} */
const OUTCOME_CLASS = {
  running: 's-IN_PROGRESS',
  COMPLETED: 's-COMPLETED',
  FAILED: 's-FAILED',
  TIMED_OUT: 's-TIMED_OUT',
  CANCELLED: 's-CANCELLED',
  requeued: 's-IN_QUEUE',
};

/** The browser's clock, read again every `ms` while mounted (for times that run on). */
/** @param {number} ms */
export function useNow(ms) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** `job`: the job as the event stream last showed it (its changes trigger a new read). */
/** @param {{ endpointId: string, job: RequestSummary }} props */
export function Attempts({ endpointId, job }) {
  const now = useNow(1000);
  const [view, setView] = useState(/** @type {(JobAttemptsView & { readAt: number }) | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  // A refused stale post changes no status: the Reload button reads the attempts again.
  const [reloads, setReloads] = useState(0);
  const revision = `${job.status}|${job.retries}|${job.startedAt ?? ''}|${job.endedAt ?? ''}|${job.workerId ?? ''}`;
  useEffect(() => {
    let stale = false;
    views
      .attempts(endpointId, job.id)
      .then((answer) => {
        if (!stale) {
          setView({ ...answer, readAt: Date.now() });
          setError(undefined);
        }
      })
      .catch((e) => {
        if (!stale) setError(e);
      });
    return () => {
      stale = true;
    };
  }, [endpointId, job.id, revision, reloads]);
  if (error) return html`<section class="card"><h2>Attempts</h2><${ErrorBox} error=${error} /></section>`;
  if (!view) return null;
  return html`<section class="card" data-test="attempts">
    <h2>Attempts <button type="button" class="small" onClick=${() => setReloads((n) => n + 1)} data-test="attempts-reload">Reload</button></h2>
    <p>Current attempt <strong data-test="attempt">${view.attempt}</strong> · retries <strong>${view.retries}</strong> · times lost <strong data-test="lost">${view.lost}</strong>${' '}
      <span class="hint">(lost: its worker gone or its take answer lost, since submitted or last retried)</span></p>
    ${
      view.attempts.length === 0
        ? html`<p class="muted">No worker has taken it yet.</p>`
        : html`<table class="grid" data-test="attempts-table">
        <thead><tr><th scope="col" class="num">#</th><th scope="col">Worker</th><th scope="col">Taken</th><th scope="col">Ended</th><th scope="col" class="num">Ran</th>
          <th scope="col">Outcome</th><th scope="col">Why</th><th scope="col" class="num">Stale posts refused</th></tr></thead>
        <tbody>${view.attempts.map(
          (a) => html`<tr data-test="attempt-row">
          <td class="num">${a.attempt ?? '—'}</td><td>${a.workerId ? html`<a href=${workerHref(endpointId, a.workerId)}><code>${a.workerId}</code></a>` : '—'}</td>
          <td class="nowrap"><${When} iso=${a.startedAt} now=${now} /></td><td class="nowrap"><${When} iso=${a.endedAt} now=${now} /></td><td class="num" data-test="attempt-ran">${duration(a.outcome === 'running' && a.durationMs !== undefined ? a.durationMs + Math.max(0, now - view.readAt) : a.durationMs)}</td>
          <td><span class=${`badge ${OUTCOME_CLASS[a.outcome] ?? ''}`} data-test="attempt-outcome">${OUTCOME_TEXT[a.outcome] ?? a.outcome}</span></td>
          <td>${a.reason ?? ''}</td>
          <td class="num" title=${a.lastStalePost ? `last: ${a.lastStalePost.what} from ${a.lastStalePost.workerId} at ${whenText({ iso: a.lastStalePost.at, now: Date.now() })}` : undefined}>${a.stalePosts}</td></tr>`,
        )}</tbody></table>`
    }
    ${view.dropped > 0 ? html`<p class="muted">${view.dropped} older attempts not kept (the last ${view.limits.maxAttemptsPerJob} are).</p>` : null}
    ${view.historyDropped ? html`<p class="muted" data-test="attempts-dropped">Not every attempt is shown: ${view.historyDropped}.</p>` : null}
    <p class="hint">Recorded by this harness since it started, for its last ${view.limits.maxJobs} jobs; an in-process worker's attempt is read from the job itself while it runs.</p>
  </section>`;
}
