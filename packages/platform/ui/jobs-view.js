// @ts-check
// @module ui/jobs-view
// One endpoint's jobs, or all endpoints' (#/jobs): filter by state, worker, kind, error code, submission time,
// text in input or output, search by id, newest or oldest first, page through them
// (the harness filters and cuts the page, in SQL on PostgreSQL; the page holds only
// what it shows). Rows show the submission date and the queue age or wait; the error
// opens in full. Selected rows, or every job the filter matches (not only the rows shown),
// can be cancelled or retried together, after a confirm that says how many jobs it touches.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ActionButton, SubmitForm, actions } from './actions.js';
import { views } from './api.js';
import { useNow } from './attempts-view.js';
import { BulkOutcomeBox, endpointLabel, endpointsPhrase } from './bulk-outcome.js';
import {
  CopyButton,
  EndpointName,
  ErrorBox,
  When,
  HealthBadge,
  Notice,
  STATES,
  StatusBadge,
  duration,
  endpointNames,
  html,
  jobHref,
  workerHref,
} from './format.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').JobsPage} JobsPage
 * @typedef {import('./api-types.js').RequestSummary} RequestSummary
 * @typedef {import('./api-types.js').ShownError} ShownError
 * @typedef {import('./api-types.js').Navigate} Navigate
 * @typedef {import('./api-types.js').ListedJob} ListedJob
 * @typedef {import('./api-types.js').JobRef} JobRef
 * @typedef {import('./api-types.js').BulkOutcome} BulkOutcome
 * @typedef {'newest' | 'oldest' | 'slowest' | 'waited'} Order
 * @typedef {{ state: string, search: string, worker: string, kind: string, error: string, text: string, from: string, to: string, order: Order, endpoint: string }} Filters
 * @typedef {{ key: string, total: number, offset: number, jobs: ListedJob[] }} ShownPage
 */

const PAGE = 50;

/** @type {Record<Order, string>} */
const ORDER_TEXT = { newest: 'newest first', oldest: 'oldest first', slowest: 'longest execution first', waited: 'longest queue wait first' };

/** @type {Record<Order, [string, string]>} */
const PAGER_TEXT = { newest: ['Newer', 'Older'], oldest: ['Older', 'Newer'], slowest: ['Previous', 'Next'], waited: ['Previous', 'Next'] };

/** @type {Filters} */
const EMPTY_FILTERS = { state: '', search: '', worker: '', kind: '', error: '', text: '', from: '', to: '', order: 'newest', endpoint: '' };

/** The filters' names in the page's URL (`#/endpoint/{id}?state=FAILED&error=SW_HANDLER`): a reload or a shared link keeps them. */
/** @type {Array<[keyof Filters, string]>} */
const URL_NAMES = [
  ['endpoint', 'endpoint'],
  ['state', 'state'],
  ['search', 'q'],
  ['text', 'text'],
  ['worker', 'worker'],
  ['kind', 'kind'],
  ['error', 'error'],
  ['from', 'from'],
  ['to', 'to'],
  ['order', 'order'],
];
const ORDERS = ['newest', 'oldest', 'slowest', 'waited'];

/** A time with its zone (`Z` or an offset) at its end. */
const ZONED = /(Z|[+-]\d\d:?\d\d)$/i;

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');

/**
 * A time filter from the URL as the datetime-local input holds it (this browser's local
 * time, no zone): a time with its zone is converted; one without (links made before the
 * URL carried zones) is read as local time, as it was written.
 * @param {string} value
 */
export function localOf(value) {
  if (!ZONED.test(value)) return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The filters a URL's hash holds (any it does not: empty). */
/** @param {string} hash @returns {Filters} */
export function filtersOfHash(hash) {
  const at = hash.indexOf('?');
  const params = new URLSearchParams(at >= 0 ? hash.slice(at + 1) : '');
  /** @type {Filters} */
  const filters = { ...EMPTY_FILTERS };
  for (const [name, param] of URL_NAMES) {
    const value = params.get(param);
    if (value === null) continue;
    if (name === 'order') filters.order = /** @type {Order} */ (ORDERS.includes(value) ? value : 'newest');
    else if (name === 'from' || name === 'to') filters[name] = localOf(value);
    else filters[name] = value;
  }
  return filters;
}

/** The jobs view's hash for `filters` (the empty ones left out); `endpointId` undefined: the list across endpoints (#/jobs). */
/** @param {string | undefined} endpointId @param {Filters} filters */
export function hashOfFilters(endpointId, filters) {
  const params = new URLSearchParams();
  for (const [name, param] of URL_NAMES) {
    if (name === 'endpoint' && endpointId !== undefined) continue;
    if (filters[name] === '' || (name === 'order' && filters.order === 'newest')) continue;
    // Times in UTC with their zone, so that a link means the same instant in every browser.
    params.set(param, name === 'from' || name === 'to' ? (isoOf(filters[name])?.replace('.000Z', 'Z') ?? filters[name]) : filters[name]);
  }
  const query = params.toString();
  return `${endpointId === undefined ? '#/jobs' : `#/endpoint/${encodeURIComponent(endpointId)}`}${query ? `?${query}` : ''}`;
}

/** A datetime-local value (local time, no zone) as ISO 8601, or undefined. */
/** @param {string} local */
function isoOf(local) {
  if (!local) return undefined;
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** The list's query string for `filters` and `offset` (`endpoint`: only for the list across endpoints). */
/** @param {Filters} filters @param {number} offset @param {boolean} across */
function queryOf(filters, offset, across) {
  const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE) });
  /** @param {string} name @param {string | undefined} value */
  const put = (name, value) => {
    if (value !== undefined && String(value).trim() !== '') query.set(name, String(value).trim());
  };
  put('state', filters.state);
  put('q', filters.search);
  put('worker', filters.worker);
  put('kind', filters.kind);
  put('error', filters.error);
  put('text', filters.text);
  put('from', isoOf(filters.from));
  put('to', isoOf(filters.to));
  if (filters.order !== 'newest') put('order', filters.order);
  if (across) put('endpoint', filters.endpoint);
  return query;
}

/** Queue age of a queued job (it runs on), else the wait it had. */
/** @param {RequestSummary} job @param {number} now */
function queueTime(job, now) {
  if (job.status === 'IN_QUEUE')
    return html`<span title="in the queue since it was submitted or last requeued" data-test="queue-age">${duration(Math.max(0, now - Date.parse(job.submittedAt)))}</span>`;
  return duration(job.delayTime);
}

/** The error, cut in the row; the whole message (as the list has it) on a click, the whole payload on the job's page. */
/** @param {{ job: RequestSummary, endpointId: string }} props */
function ErrorCell({ job, endpointId }) {
  if (!job.errorType) return html`<td></td>`;
  const text = `${job.errorType}: ${job.errorMessage ?? ''}`;
  return html`<td class="err-cell"><details data-test="error-cell"><summary class="err" title=${text}>${text}</summary>
    <p class="err-full">${job.errorMessage ?? ''}</p><a href=${jobHref(endpointId, job.id)}>the whole error, with its stack</a></details></td>`;
}

/** A selected row's key (endpoint ids hold no space), and back. */
/** @param {string} endpointId @param {string} id */
const refKey = (endpointId, id) => `${endpointId} ${id}`;
/** @param {string} key @returns {JobRef} */
const refOf = (key) => ({ endpointId: key.slice(0, key.indexOf(' ')), id: key.slice(key.indexOf(' ') + 1) });

/** @type {Record<'cancel' | 'retry', [string, string]>} */
const BULK_VERBS = { cancel: ['Cancel', 'Cancelled'], retry: ['Retry', 'Retried'] };

/**
 * The filters, kept in the URL: each change replaces it (no history entry a keystroke); a
 * link, back or forward sets them from it. `knownHash` is the hash these filters came from
 * or were written to: an effect that runs late (Preact runs effects after the paint) while
 * a navigation has already put another hash there leaves it alone, for the hashchange
 * handler to read; it wrote the old filters over the new link before.
 * @param {string | undefined} endpointId
 */
function useFiltersInUrl(endpointId) {
  const [filters, setFilters] = useState(() => filtersOfHash(location.hash));
  const knownHash = useRef(location.hash);
  useEffect(() => {
    if (location.hash !== knownHash.current) return;
    const wanted = hashOfFilters(endpointId, filters);
    if (location.hash !== wanted) history.replaceState(null, '', wanted);
    knownHash.current = location.hash;
  }, [endpointId, filters]);
  useEffect(() => {
    const onHash = () => {
      knownHash.current = location.hash;
      const fromUrl = filtersOfHash(location.hash);
      setFilters((f) => (JSON.stringify(f) === JSON.stringify(fromUrl) ? f : fromUrl));
    };
    window.addEventListener('hashchange', onHash);
    // A navigation between the first render and this effect (after the paint) fired its hashchange
    // before anyone listened: read the hash it left.
    if (location.hash !== knownHash.current) onHash();
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return /** @type {const} */ ([filters, setFilters]);
}

/**
 * The page of jobs the harness answers for `query`, asked again when `revision` (the counts)
 * or `reloads` move; an answer that comes after the query changed is dropped.
 * @param {string | undefined} endpointId @param {string} query @param {string} revision @param {number} reloads
 */
function useJobsPage(endpointId, query, revision, reloads) {
  const [page, setPage] = useState(/** @type {ShownPage | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  useEffect(() => {
    let stale = false;
    /** @type {Promise<ShownPage>} */
    const asked =
      endpointId === undefined
        ? views.allJobs(query).then((a) => ({ key: '*', total: a.total, offset: a.offset, jobs: a.jobs }))
        : views.jobs(endpointId, query).then((a) => ({ key: a.endpointId, total: a.total, offset: a.offset, jobs: a.jobs }));
    asked
      .then((answer) => {
        if (!stale) {
          setPage(answer);
          setError(undefined);
        }
      })
      .catch((e) => {
        if (!stale) setError(e);
      });
    return () => {
      stale = true;
    };
  }, [endpointId, query, revision, reloads]);
  return { page, setPage, error, setError };
}

/** "/" anywhere but in a text field focuses `box`. @param {{ current: HTMLInputElement | null }} box */
function useSlashFocus(box) {
  useEffect(() => {
    /** @param {KeyboardEvent} e */
    const onKey = (e) => {
      if (e.key === '/' && document.activeElement?.tagName !== 'INPUT' && document.activeElement?.tagName !== 'TEXTAREA') {
        e.preventDefault();
        box.current?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/**
 * Cancel or retry jobs together, after a confirm that says how many: the selected ones, or
 * every job the filter matches (not only the page).
 * @param {{ names: Readonly<Record<string, string>>, filtersQuery: () => string, endpointId: string | undefined, clearSelection: () => void, onError: (e: ShownError) => void, reload: () => void }} deps
 */
function useBulk({ names, filtersQuery, endpointId, clearSelection, onError, reload }) {
  const [notice, setNotice] = useState(/** @type {string | undefined} */ (undefined));
  const [done, setDone] = useState(/** @type {{ outcome: BulkOutcome, verb: string } | undefined} */ (undefined));
  /** @param {'cancel' | 'retry'} action @param {JobRef[]} refs @param {string} what @param {string} [note] */
  const run = async (action, refs, what, note = '') => {
    const [verb, doneVerb] = BULK_VERBS[action];
    setDone(undefined);
    if (refs.length === 0) {
      setNotice(`No jobs to ${action}`);
      return;
    }
    if (!window.confirm(`${verb} ${refs.length} ${refs.length === 1 ? 'job' : 'jobs'} ${what} ${endpointsPhrase(refs, names)}${note}?`)) return;
    setNotice(`${doneVerb}…`);
    try {
      const outcome = await actions.bulk(action, refs);
      setNotice(undefined);
      setDone({ outcome, verb: doneVerb });
      clearSelection();
    } catch (e) {
      setNotice(undefined);
      onError(/** @type {ShownError} */ (e));
    }
    reload();
  };
  /** @param {'cancel' | 'retry'} action */
  const runOnMatching = async (action) => {
    setDone(undefined);
    setNotice('Counting the jobs the filter matches…');
    try {
      const matching = await views.matchingJobs(filtersQuery(), endpointId);
      setNotice(undefined);
      const over = matching.total > matching.jobs.length ? ` (the first ${matching.jobs.length} of ${matching.total}: at most ${matching.max} at once)` : '';
      await run(action, matching.jobs, 'matching the filter', over);
    } catch (e) {
      setNotice(undefined);
      onError(/** @type {ShownError} */ (e));
    }
  };
  const reset = () => {
    setNotice(undefined);
    setDone(undefined);
  };
  return { notice, done, run, runOnMatching, reset };
}

/** The title, and for one endpoint its health, counts and purge (or that it does not exist). */
/** @param {{ endpointId: string | undefined, row: EndpointRow | undefined, overview: OverviewView, names: Readonly<Record<string, string>> }} props */
function JobsHeading({ endpointId, row, overview, names }) {
  if (endpointId === undefined) return html`<h1>All jobs <span class="muted">(every endpoint)</span></h1>`;
  const title = html`<h1>Endpoint <${EndpointName} id=${endpointId} names=${names} link=${false} /> <${CopyButton} text=${endpointId} what="endpoint id" /></h1>`;
  if (!row)
    return html`${title}<p class="error" role="alert" data-test="unknown-endpoint">This harness has no endpoint <code>${endpointId}</code> (it was never used, or it was deleted).
      Its endpoints: ${overview.endpoints.length > 0 ? overview.endpoints.map((e, i) => html`${i > 0 ? ', ' : ''}<a href=${`#/endpoint/${encodeURIComponent(e.id)}`}>${e.id}</a>`) : 'none yet'}.</p>`;
  return html`${title}<p><${HealthBadge} health=${row.health} /></p><p data-test="endpoint-summary">Queue ${row.queueDepth} · kept now: ${STATES.map((s) => `${s} ${row.jobs[s]}`).join(' · ')}${row.totals ? ` · since created (/health): ${row.totals.completed} completed, ${row.totals.failed} failed, ${row.totals.retried} retried` : ''} · workers ${row.workers.idle} idle / ${row.workers.running} running
      <${ActionButton} label="Purge queue" test="purge" confirmText=${`Remove every queued job of endpoint ${endpointLabel(endpointId, names)} (${row.queueDepth} now)?`} run=${() => actions.purge(endpointId)} describe=${(/** @type {{ removed: number }} */ a) => `Removed ${a.removed} queued jobs`} /></p>`;
}

/** The filter form. */
/** @param {{ across: boolean, filters: Filters, overview: OverviewView, setFilter: (name: keyof Filters, value: string) => void, clear: () => void, searchBox: { current: HTMLInputElement | null } }} props */
function FilterForm({ across, filters, overview, setFilter, clear, searchBox }) {
  /** @param {'text' | 'worker' | 'error'} name @param {string} label @param {string} placeholder */
  const text = (name, label, placeholder) => html`<label>${label} <input id=${`filter-${name}`} type="search" placeholder=${placeholder} value=${filters[name]}
    onInput=${(/** @type {Event & { currentTarget: HTMLInputElement }} */ e) => setFilter(name, e.currentTarget.value)} /></label>`;
  /** @param {keyof Filters} name */
  const onSelect = (name) => (/** @type {Event & { currentTarget: HTMLSelectElement }} */ e) => setFilter(name, e.currentTarget.value);
  /** @param {keyof Filters} name */
  const onInput = (name) => (/** @type {Event & { currentTarget: HTMLInputElement }} */ e) => setFilter(name, e.currentTarget.value);
  return html`<form class="filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()} aria-label="Filter jobs">
      ${
        across
          ? html`<label>Endpoint <select id="filter-endpoint" value=${filters.endpoint} onChange=${onSelect('endpoint')}>
        <option value="">all</option>${overview.endpoints.map((e) => html`<option value=${e.id}>${e.name ? `${e.name} (${e.id})` : e.id}</option>`)}</select></label>`
          : null
      }
      <label>State <select id="state-filter" value=${filters.state} onChange=${onSelect('state')}>
        <option value="">all</option>${STATES.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
      <label>Job id <input id="job-search" ref=${searchBox} type="search" placeholder="search (press /)" value=${filters.search}
        onInput=${onInput('search')} /></label>
      ${text('text', 'In input, output or error', 'text')}
      ${text('worker', 'Worker', 'worker id')}
      <label>Kind <select id="filter-kind" value=${filters.kind} onChange=${onSelect('kind')}>
        <option value="">all</option><option value="run">run</option><option value="runsync">runsync</option></select></label>
      ${text('error', 'Error code (or its beginning)', 'SW_…')}
      <label>Submitted from <input id="filter-from" type="datetime-local" step="1" value=${filters.from} onInput=${onInput('from')} /></label>
      <label>to <input id="filter-to" type="datetime-local" step="1" value=${filters.to} onInput=${onInput('to')} /></label>
      <label>Order <select id="filter-order" value=${filters.order} onChange=${onSelect('order')}>
        <option value="newest">newest first</option><option value="oldest">oldest first</option>
        <option value="slowest">longest execution first</option><option value="waited">longest queue wait first</option></select></label>
      <button type="button" class="small" onClick=${clear} data-test="clear-filters">Clear</button>
    </form>`;
}

/** The bulk actions' row: on the selected jobs, or on every job the filter matches. */
/** @param {{ chosen: string[], total: number, bulk: ReturnType<typeof useBulk> }} props */
function BulkBar({ chosen, total, bulk }) {
  return html`<div class="row bulk" aria-label="Selected jobs">
      <span data-test="selected-count">${chosen.length} selected</span>
      <button type="button" class="small" disabled=${chosen.length === 0} data-test="bulk-cancel" onClick=${() => bulk.run('cancel', chosen.map(refOf), 'selected')}>Cancel selected</button>
      <button type="button" class="small" disabled=${chosen.length === 0} data-test="bulk-retry" onClick=${() => bulk.run('retry', chosen.map(refOf), 'selected')}>Retry selected</button>
      <span class="muted">or every job matching the filter (${total}):</span>
      <button type="button" class="small" disabled=${total === 0} data-test="bulk-cancel-matching" onClick=${() => bulk.runOnMatching('cancel')}>Cancel all ${total}</button>
      <button type="button" class="small" disabled=${total === 0} data-test="bulk-retry-matching" onClick=${() => bulk.runOnMatching('retry')}>Retry all ${total}</button>
      <${Notice} notice=${bulk.notice} />
    </div>
    <${BulkOutcomeBox} outcome=${bulk.done?.outcome} verb=${bulk.done?.verb ?? ''} />`;
}

/** The rows, with a check box each. */
/** @param {{ jobs: ListedJob[], across: boolean, order: Order, names: Readonly<Record<string, string>>, now: number, selected: Set<string>, setSelected: (s: Set<string> | ((s: Set<string>) => Set<string>)) => void }} props */
function JobsTable({ jobs, across, order, names, now, selected, setSelected }) {
  const allShown = jobs.length > 0 && jobs.every((j) => selected.has(refKey(j.endpointId, j.id)));
  /** @param {string} key */
  const toggle = (key) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  return html`<table class="grid" data-test="jobs">
      <caption>Jobs, ${ORDER_TEXT[order]}</caption>
      <thead><tr><th scope="col"><input type="checkbox" aria-label="select every job shown" checked=${allShown} data-test="select-all"
          onChange=${() => setSelected(allShown ? new Set() : new Set(jobs.map((j) => refKey(j.endpointId, j.id))))} /></th>
        ${across ? html`<th scope="col">Endpoint</th>` : null}<th scope="col">Job</th><th scope="col">Status</th><th scope="col">Kind</th><th scope="col">Submitted</th>
        <th scope="col" class="num">Queue age / wait</th><th scope="col" class="num">Execution</th><th scope="col" class="num">Retries</th><th scope="col">Worker</th><th scope="col">Error</th></tr></thead>
      <tbody>${jobs.map(
        (j) => html`<tr data-test="jobs-row">
        <td><input type="checkbox" aria-label=${`select ${j.id}`} checked=${selected.has(refKey(j.endpointId, j.id))} onChange=${() => toggle(refKey(j.endpointId, j.id))} data-test="select-job" /></td>
        ${across ? html`<td data-test="row-endpoint"><${EndpointName} id=${j.endpointId} names=${names} /></td>` : null}
        <td class="nowrap"><a href=${jobHref(j.endpointId, j.id)}><code>${j.id}</code></a> <${CopyButton} text=${j.id} what="job id" /></td>
        <td><${StatusBadge} status=${j.status} /></td><td>${j.kind}</td><td class="nowrap"><${When} iso=${j.submittedAt} now=${now} test="submitted" /></td>
        <td class="num">${queueTime(j, now)}</td><td class="num">${duration(j.executionTime)}</td><td class="num">${j.retries}</td>
        <td>${j.workerId ? html`<a href=${workerHref(j.endpointId, j.workerId)}><code>${j.workerId}</code></a>` : ''}</td><${ErrorCell} job=${j} endpointId=${j.endpointId} /></tr>`,
      )}</tbody>
    </table>`;
}

/**
 * The pager describes the rows shown: the page the harness answered, not the one asked for
 * (after a click the rows stay those of the old page until the new one arrives).
 * @param {{ shown: ShownPage | undefined, offset: number, order: Order, setOffset: (f: (o: number) => number) => void }} props
 */
function Pager({ shown, offset, order, setOffset }) {
  const total = shown?.total ?? 0;
  const shownOffset = shown?.offset ?? 0;
  const first = total === 0 ? 0 : shownOffset + 1;
  const last = Math.min(shownOffset + PAGE, total);
  const loading = shown === undefined || shown.offset !== offset;
  return html`<nav class="pager" aria-label="Pages">
      <button type="button" onClick=${() => setOffset((o) => Math.max(0, o - PAGE))} disabled=${offset === 0} data-test="prev">← ${PAGER_TEXT[order][0]}</button>
      <span data-test="page-info" aria-busy=${loading ? 'true' : 'false'}>${first}–${last} of ${total}</span>
      <button type="button" onClick=${() => setOffset((o) => o + PAGE)} disabled=${offset + PAGE >= total} data-test="next">${PAGER_TEXT[order][1]} →</button>
    </nav>`;
}

/** `endpointId` undefined: every endpoint's jobs in one list (#/jobs). */
/** @param {{ endpointId: string | undefined, row: EndpointRow | undefined, overview: OverviewView, navigate: Navigate }} props */
export function JobsView({ endpointId, row, overview, navigate }) {
  const across = endpointId === undefined;
  const [filters, setFilters] = useFiltersInUrl(endpointId);
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState(/** @type {Set<string>} */ (new Set()));
  const [reloads, setReloads] = useState(0);
  const searchBox = useRef(/** @type {HTMLInputElement | null} */ (null));
  const now = useNow(1000);
  const names = endpointNames(overview.endpoints);
  // Refetch when the endpoint's counts move (a tick), the filter, or the page changes.
  const revision = across ? JSON.stringify(overview.endpoints.map((e) => e.jobs)) : row ? JSON.stringify(row.jobs) : '';
  const { page, setPage, error, setError } = useJobsPage(endpointId, queryOf(filters, offset, across).toString(), revision, reloads);
  const bulk = useBulk({
    names,
    filtersQuery: () => queryOf(filters, 0, across).toString(),
    endpointId,
    clearSelection: () => setSelected(new Set()),
    onError: setError,
    reload: () => setReloads((n) => n + 1),
  });
  useSlashFocus(searchBox);
  /** @param {keyof Filters} name @param {string} value */
  const setFilter = (name, value) => {
    setFilters((f) => ({ ...f, [name]: value }));
    setOffset(0);
  };
  // Another endpoint: its own filters and first page, nothing of the previous one's.
  useEffect(() => {
    setPage(undefined);
    setError(undefined);
    setOffset(0);
    setSelected(new Set());
    bulk.reset();
  }, [endpointId]);
  // Rows are shown only under their own endpoint's title (a page answered for another is never shown).
  const shown = page?.key === (endpointId ?? '*') ? page : undefined;
  const clear = () => {
    setFilters(EMPTY_FILTERS);
    setOffset(0);
  };
  return html`<div>
    <${JobsHeading} endpointId=${endpointId} row=${row} overview=${overview} names=${names} />
    <${FilterForm} across=${across} filters=${filters} overview=${overview} setFilter=${setFilter} clear=${clear} searchBox=${searchBox} />
    <${ErrorBox} error=${error} />
    <${BulkBar} chosen=${[...selected]} total=${shown?.total ?? 0} bulk=${bulk} />
    <${JobsTable} jobs=${shown?.jobs ?? []} across=${across} order=${filters.order} names=${names} now=${now} selected=${selected} setSelected=${setSelected} />
    <${Pager} shown=${shown} offset=${offset} order=${filters.order} setOffset=${setOffset} />
    <${SubmitForm} endpoints=${overview.endpoints} defaultEndpoint=${endpointId} overview=${overview} navigate=${navigate} />
  </div>`;
}
