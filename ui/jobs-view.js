// @module ui/jobs-view
// One endpoint's jobs, newest first: filter by state, search by id, page through
// them (the harness filters and cuts the page; the page holds only what it shows).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ActionButton, SubmitForm, actions } from './actions.js';
import { api } from './api.js';
import { workerHref } from './worker-view.js';
import { EndpointName, ErrorBox, HealthBadge, STATES, StatusBadge, clock, duration, endpointNames, html, jobHref } from './format.js';

const PAGE = 50;

export function JobsView({ endpointId, row, overview, navigate }) {
  const [state, setState] = useState('');
  const [search, setSearch] = useState('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState(undefined);
  const [error, setError] = useState(undefined);
  const searchBox = useRef(null);
  // Refetch when the endpoint's counts move (a tick), the filter, or the page changes.
  const revision = row ? JSON.stringify(row.jobs) : '';

  // Another endpoint: its own filters and first page, nothing of the previous one's.
  useEffect(() => {
    setPage(undefined);
    setError(undefined);
    setOffset(0);
  }, [endpointId]);

  useEffect(() => {
    let stale = false;
    const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE) });
    if (state) query.set('state', state);
    if (search.trim()) query.set('q', search.trim());
    api('GET', `/ui/api/endpoints/${encodeURIComponent(endpointId)}/jobs?${query}`)
      .then((answer) => { if (!stale) { setPage(answer); setError(undefined); } })
      .catch((e) => { if (!stale) setError(e); });
    return () => { stale = true; };
  }, [endpointId, state, search, offset, revision]);
  // Rows are shown only under their own endpoint's title (a page answered for another is never shown).
  const shown = page?.endpointId === endpointId ? page : undefined;

  useEffect(() => {
    const onKey = (e) => {
      if (e.key === '/' && document.activeElement?.tagName !== 'INPUT' && document.activeElement?.tagName !== 'TEXTAREA') {
        e.preventDefault();
        searchBox.current?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  // The pager describes the rows shown: the page the harness answered, not the one asked for
  // (after a click the rows stay those of the old page until the new one arrives).
  const total = shown?.total ?? 0;
  const shownOffset = shown?.offset ?? 0;
  const first = total === 0 ? 0 : shownOffset + 1;
  const last = Math.min(shownOffset + PAGE, total);
  const loading = shown === undefined || shown.offset !== offset;
  return html`<div>
    <h1>Endpoint <${EndpointName} id=${endpointId} names=${endpointNames(overview.endpoints)} link=${false} /></h1>
    ${row ? html`<p><${HealthBadge} health=${row.health} /></p><p data-test="endpoint-summary">Queue ${row.queueDepth} · kept now: ${STATES.map((s) => `${s} ${row.jobs[s]}`).join(' · ')}${row.totals ? ` · since created (/health): ${row.totals.completed} completed, ${row.totals.failed} failed, ${row.totals.retried} retried` : ''} · workers ${row.workers.idle} idle / ${row.workers.running} running
      <${ActionButton} label="Purge queue" test="purge" confirmText=${`Remove every queued job of ${endpointId}?`} run=${() => actions.purge(endpointId)} describe=${(a) => `Removed ${a?.removed ?? 0} queued jobs`} /></p>` : null}
    <form class="filters" onSubmit=${(e) => e.preventDefault()} aria-label="Filter jobs">
      <label>State <select id="state-filter" value=${state} onChange=${(e) => { setState(e.currentTarget.value); setOffset(0); }}>
        <option value="">all</option>${STATES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
      <label>Job id <input id="job-search" ref=${searchBox} type="search" placeholder="search (press /)" value=${search}
        onInput=${(e) => { setSearch(e.currentTarget.value); setOffset(0); }} /></label>
    </form>
    <${ErrorBox} error=${error} />
    <table class="grid" data-test="jobs">
      <caption>Jobs, newest first</caption>
      <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Kind</th><th scope="col">Submitted</th>
        <th scope="col" class="num">Queue wait</th><th scope="col" class="num">Execution</th><th scope="col" class="num">Retries</th><th scope="col">Worker</th><th scope="col">Error</th></tr></thead>
      <tbody>${(shown?.jobs ?? []).map((j) => html`<tr data-test="jobs-row">
        <td><a href=${jobHref(endpointId, j.id)}><code>${j.id}</code></a></td>
        <td><${StatusBadge} status=${j.status} /></td><td>${j.kind}</td><td>${clock(j.submittedAt)}</td>
        <td class="num">${duration(j.delayTime)}</td><td class="num">${duration(j.executionTime)}</td><td class="num">${j.retries}</td>
        <td>${j.workerId ? html`<a href=${workerHref(endpointId, j.workerId)}><code>${j.workerId}</code></a>` : ''}</td><td class="err">${j.errorType ? `${j.errorType}: ${j.errorMessage ?? ''}` : ''}</td></tr>`)}</tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" onClick=${() => setOffset((o) => Math.max(0, o - PAGE))} disabled=${offset === 0} data-test="prev">← Newer</button>
      <span data-test="page-info" aria-busy=${loading ? 'true' : 'false'}>${first}–${last} of ${total}</span>
      <button type="button" onClick=${() => setOffset((o) => o + PAGE)} disabled=${offset + PAGE >= total} data-test="next">Older →</button>
    </nav>
    <${SubmitForm} endpoints=${overview.endpoints} defaultEndpoint=${endpointId} overview=${overview} navigate=${navigate} />
  </div>`;
}
