// @ts-check
// @module ui/app
// The dashboard page: login (the API key kept in sessionStorage, or localStorage when
// "remember on this device" is ticked; sent in the Authorization header), hash routes
// (#/, #/jobs (all endpoints' jobs), #/endpoint/{id}, #/endpoint/{id}/job/{jobId},
// #/endpoint/{id}/worker/{workerId}, #/workers), one live event stream for the page, light and dark schemes.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { followEvents, keyStore, views } from './api.js';
import { ErrorBox, endpointNames, html, whenText } from './format.js';
import { JobView } from './job-view.js';
import { JobsView } from './jobs-view.js';
import { OverviewView } from './overview-view.js';
import { WorkersView } from './workers-view.js';
import { WorkerView } from './worker-view.js';

/**
 * @typedef {import('./api-types.js').OverviewView} Overview
 * @typedef {import('./api-types.js').LiveMessage} LiveMessage
 * @typedef {import('./api-types.js').LiveJob} LiveJob
 * @typedef {import('./api-types.js').ChunkPreview} ChunkPreview
 * @typedef {import('./api-types.js').SeriesPoint} SeriesPoint
 * @typedef {import('./api.js').ApiError} ApiError
 * @typedef {{ view: 'overview' | 'workers' | 'all-jobs', endpointId?: undefined }
 *   | { view: 'jobs', endpointId: string }
 *   | { view: 'job', endpointId: string, jobId: string }
 *   | { view: 'worker', endpointId: string, workerId: string }} Route
 */

/** @param {string} hash @returns {Route} */
function parseRoute(hash) {
  // A query after the path (`#/endpoint/{id}?state=FAILED`) is the view's own (jobs-view.js: the filters).
  const parts = (hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'endpoint' && parts[1] && parts[2] === 'job' && parts[3]) return { view: 'job', endpointId: parts[1], jobId: parts[3] };
  if (parts[0] === 'endpoint' && parts[1] && parts[2] === 'worker' && parts[3]) return { view: 'worker', endpointId: parts[1], workerId: parts[3] };
  if (parts[0] === 'endpoint' && parts[1]) return { view: 'jobs', endpointId: parts[1] };
  if (parts[0] === 'workers') return { view: 'workers' };
  if (parts[0] === 'jobs') return { view: 'all-jobs' };
  return { view: 'overview' };
}

/** The tab's title for a view: what it shows first (a job id, an endpoint's name), then the harness. */
/** @param {Route} route @param {Readonly<Record<string, string>>} names */
export function pageTitle(route, names) {
  const endpoint = route.endpointId !== undefined ? (names[route.endpointId] ?? route.endpointId) : '';
  const what =
    route.view === 'job'
      ? `Job ${route.jobId} · ${endpoint}`
      : route.view === 'worker'
        ? `Worker ${route.workerId} · ${endpoint}`
        : route.view === 'jobs'
          ? `${endpoint} jobs`
          : route.view === 'all-jobs'
            ? 'All jobs'
            : route.view === 'workers'
              ? 'Workers'
              : 'Endpoints';
  return `${what} · serverless-worker harness`;
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

const SCHEMES = ['auto', 'light', 'dark'];

/** @returns {[string, () => void]} */
function useScheme() {
  const [scheme, setScheme] = useState(localStorage.getItem('serverless-worker-scheme') ?? 'auto');
  useEffect(() => {
    document.documentElement.dataset.scheme = scheme;
    localStorage.setItem('serverless-worker-scheme', scheme);
  }, [scheme]);
  return [scheme, () => setScheme(SCHEMES[(SCHEMES.indexOf(scheme) + 1) % SCHEMES.length] ?? 'auto')];
}

/** @param {{ error: ApiError | undefined, onKey: (key: string, remember: boolean) => void }} props */
function Login({ error, onKey }) {
  const [key, setKey] = useState('');
  const [remember, setRemember] = useState(false);
  return html`<form class="card login" onSubmit=${(/** @type {Event} */ e) => {
    e.preventDefault();
    onKey(key, remember);
  }} aria-label="Log in">
    <h1>serverless-worker harness</h1>
    <p>This harness needs its API key (the one given with --api-key or SERVERLESS_WORKER_API_KEY). It is kept in this tab's session storage only, unless you tick "remember on this device".</p>
    <label>API key <input id="api-key" type="password" autocomplete="current-password" value=${key} onInput=${(/** @type {InputEvent & { currentTarget: HTMLInputElement }} */ e) => setKey(e.currentTarget.value)} required autofocus /></label>
    <label class="inline"><input id="remember-key" type="checkbox" checked=${remember} onChange=${(/** @type {Event & { currentTarget: HTMLInputElement }} */ e) => setRemember(e.currentTarget.checked)} data-test="remember" />
      Remember on this device <span class="hint">(kept in this browser's local storage for new tabs, until Log out; leave it off on a shared computer)</span></label>
    <button type="submit" class="primary" data-test="login">Log in</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

/** The chart points the harness keeps (historyMinutes of sampleIntervalMs points): the page keeps as many. */
/**
 * @param {readonly SeriesPoint[]} points
 * @param {{ historyMinutes?: number, sampleIntervalMs?: number }} overview
 */
function keepPoints(points, overview) {
  const capacity = Math.max(1, Math.ceil(((overview.historyMinutes ?? 10) * 60_000) / (overview.sampleIntervalMs ?? 1000)));
  return points.length > capacity ? points.slice(points.length - capacity) : points;
}

/** @returns {LiveJob} */
function emptyLive() {
  return { job: undefined, chunks: [], missed: 0, skipped: 0, gone: false };
}

/** Chunks a job page holds (the last ones): a stream of 50 000 chunks keeps the page light; earlier ones load on demand. */
const KEPT_CHUNKS = 500;
/** @param {ChunkPreview[]} chunks */
const keep = (chunks) => (chunks.length > KEPT_CHUNKS ? chunks.slice(chunks.length - KEPT_CHUNKS) : chunks);

/**
 * What one live-stream message changes: the overview (a tick, a hello), the job followed
 * (its record and chunks), or whether the charts hold their history.
 * @param {{ setOverview: (f: (o: Overview | undefined) => Overview | undefined) => void, setLive: (f: (l: LiveJob) => LiveJob) => void, setSeriesReady: (ready: boolean) => void }} set
 * @returns {(message: LiveMessage) => void}
 */
function liveEventHandler({ setOverview, setLive, setSeriesReady }) {
  return ({ event, data }) => {
    // The page listens only while it has an overview (the effect's condition); a logout drops it and the stream with it.
    if (event === 'tick') {
      setOverview(
        (o) =>
          o && {
            ...o,
            now: data.now,
            endpoints: data.endpoints,
            workers: data.workers,
            departedWorkers: data.departedWorkers,
            gpu: data.gpu,
            panels: data.panels,
            series: keepPoints([...o.series, data.point], o),
          },
      );
    } else if (event === 'hello') {
      setOverview((o) => o && { ...o, ...data });
      // The chart history comes from the overview (the live stream carries none): read again on each hello, for the
      // points missed during a reconnect, and on the first, for the history the harness rebuilt when this page connected.
      views
        .overview()
        .then((fresh) => setOverview((o) => o && { ...o, series: fresh.series }))
        .catch(() => {})
        .finally(() => setSeriesReady(true));
    } else if (event === 'job') {
      setLive((l) => ({ ...l, job: data, chunks: l.chunks.length === 0 ? data.recentChunks : l.chunks }));
    } else if (event === 'chunk') {
      setLive((l) => ((l.chunks.at(-1)?.index ?? -1) >= data.index ? l : { ...l, chunks: keep([...l.chunks, data]) }));
    } else if (event === 'chunks-skipped') {
      setLive((l) => ({ ...l, skipped: l.skipped + data.count }));
    } else if (event === 'chunks-missed') {
      setLive((l) => ({ ...l, missed: l.missed + data.count }));
    } else if (event === 'chunks-reset') {
      setLive((l) => ({ ...l, chunks: [], missed: 0, skipped: 0 }));
    } else if (event === 'job-gone') {
      setLive((l) => ({ ...l, gone: true }));
    }
  };
}

/** The harness is not answering: since when, why, and how old what the page shows is. */
/** @param {{ down: { since: number, error: ApiError } | undefined, overview: Overview }} props */
function UnreachableBanner({ down, overview }) {
  if (!down) return null;
  return html`<div class="banner" role="alert" data-test="unreachable">
      The harness is not answering since ${whenText({ at: down.since, now: Date.now() })}: ${down.error.message}.
      <span class="hint">What this page shows is from ${overview.now ? whenText({ at: new Date(overview.now).getTime(), now: Date.now() }) : 'before'}; it reconnects by itself (every second).</span></div>`;
}

/** The page's header: the views, the live link's state, the colour scheme, log out. */
/** @param {{ route: Route, link: string, scheme: string, nextScheme: () => void, authenticated: boolean, logOut: () => void }} props */
function PageHeader({ route, link, scheme, nextScheme, authenticated, logOut }) {
  return html`<header>
      <a class="brand" href="#/">serverless-worker harness</a>
      <nav aria-label="Views"><a href="#/" aria-current=${route.view === 'overview' ? 'page' : undefined}>Endpoints</a>
        <a href="#/jobs" aria-current=${route.view === 'all-jobs' ? 'page' : undefined} data-test="all-jobs-link">All jobs</a>
        <a href="#/workers" aria-current=${route.view === 'workers' ? 'page' : undefined}>Workers</a>
        <a href="/docs" data-test="docs-link" title="the queue API in Swagger UI: try each route with this key">API docs</a></nav>
      <span class=${`link ${link === 'open' ? 'ok' : ''}`} data-test="live" title="live updates">${link === 'open' ? '● live' : link}</span>
      <button type="button" onClick=${nextScheme} title="colour scheme" data-test="scheme">Scheme: ${scheme}</button>
      ${authenticated ? html`<button type="button" onClick=${logOut}>Log out</button>` : null}
    </header>`;
}

/** The view the route names. */
/** @param {{ route: Route, overview: Overview, live: LiveJob, seriesReady: boolean, navigate: (href: string) => void }} props */
function RoutedView({ route, overview, live, seriesReady, navigate }) {
  const names = endpointNames(overview.endpoints);
  switch (route.view) {
    case 'overview':
      return html`<${OverviewView} overview=${overview} navigate=${navigate} seriesReady=${seriesReady} />`;
    case 'all-jobs':
      // Keyed apart from one endpoint's list, as when each view had its own place in the page: no state carried between them.
      return html`<${JobsView} key="all-jobs" endpointId=${undefined} row=${undefined} overview=${overview} navigate=${navigate} />`;
    case 'jobs': {
      const row = overview.endpoints.find((e) => e.id === route.endpointId);
      return html`<${JobsView} key="jobs" endpointId=${route.endpointId} row=${row} overview=${overview} navigate=${navigate} />`;
    }
    case 'job':
      return html`<${JobView} endpointId=${route.endpointId} jobId=${route.jobId} live=${live} names=${names} overview=${overview} navigate=${navigate} />`;
    case 'workers':
      return html`<${WorkersView} overview=${overview} />`;
    case 'worker':
      return html`<${WorkerView} endpointId=${route.endpointId} workerId=${route.workerId} overview=${overview} names=${names} />`;
    default:
      return null;
  }
}

function App() {
  const route = useRoute();
  const [scheme, nextScheme] = useScheme();
  const [overview, setOverview] = useState(/** @type {Overview | undefined} */ (undefined));
  const [authError, setAuthError] = useState(/** @type {ApiError | undefined} */ (undefined));
  const [needKey, setNeedKey] = useState(false);
  const [link, setLink] = useState('connecting');
  // Since when the harness has not answered (the live stream's reconnects fail), and why.
  const [down, setDown] = useState(/** @type {{ since: number, error: ApiError } | undefined} */ (undefined));
  const [live, setLive] = useState(emptyLive());
  const [attempt, setAttempt] = useState(0);
  // Whether the charts hold the history: the first overview can come before the harness rebuilt it
  // (it does when the first page connects), so the charts say they are loading until the read after hello.
  const [seriesReady, setSeriesReady] = useState(false);

  // Load the overview; a 401 shows the login form with the API's message.
  useEffect(() => {
    views
      .overview()
      .then((o) => {
        setOverview(o);
        setNeedKey(false);
        setAuthError(undefined);
      })
      .catch((e) => {
        if (e.status === 401) {
          setNeedKey(true);
          setAuthError(keyStore.get() ? e : undefined);
        } else setAuthError(e);
      });
  }, [attempt]);

  // One event stream for the page; it follows the job on a job page.
  const watch = route.view === 'job' ? { endpoint: route.endpointId, job: route.jobId } : {};
  const watchKey = `${watch.endpoint ?? ''}/${watch.job ?? ''}`;
  useEffect(() => {
    if (!overview) return undefined;
    const abort = new AbortController();
    setLive(emptyLive());
    /** @param {'open' | 'retrying' | ApiError} state */
    const onState = (state) => {
      if (typeof state !== 'string') {
        setLink(`error: ${state.message}`);
        if (state.status === 401) {
          setNeedKey(true);
          setOverview(undefined);
        }
        if (state.status === 0 || state.status >= 500) setDown((d) => d ?? { since: Date.now(), error: state });
      } else {
        setLink(state);
        if (state === 'open') setDown(undefined);
      }
    };
    void followEvents(watch, liveEventHandler({ setOverview, setLive, setSeriesReady }), onState, abort.signal);
    return () => abort.abort();
  }, [overview === undefined, watchKey]);

  /** @param {string} key @param {boolean} remember */
  const logIn = (key, remember) => {
    keyStore.set(key, remember);
    setAttempt((n) => n + 1);
  };
  const logOut = () => {
    keyStore.clear();
    setOverview(undefined);
    setNeedKey(true);
    setAuthError(undefined);
  };
  /** @param {string} href */
  const navigate = (href) => {
    location.hash = href;
  };

  useEffect(() => {
    document.title = pageTitle(route, overview ? endpointNames(overview.endpoints) : {});
  }, [route, overview?.endpoints]);

  if (needKey) return html`<main><${Login} error=${authError} onKey=${logIn} /></main>`;
  if (!overview) return html`<main>${authError ? html`<${ErrorBox} error=${authError} />` : html`<p class="muted">Loading…</p>`}</main>`;
  return html`<${UnreachableBanner} down=${down} overview=${overview} />
    <${PageHeader} route=${route} link=${link} scheme=${scheme} nextScheme=${nextScheme} authenticated=${overview.authenticated} logOut=${logOut} />
    <main class=${down ? 'stale' : ''}>
      <${RoutedView} route=${route} overview=${overview} live=${live} seriesReady=${seriesReady} navigate=${navigate} />
    </main>
    <footer class="muted">serverless-worker ${overview.version}</footer>`;
}

const root = document.getElementById('app');
if (!root) throw new Error('the page has no #app element');
root.textContent = '';
render(html`<${App} />`, root);
