// @ts-check
// @module ui/job-view
// One job: status, timings, retries, worker, input, output or structured error (the
// stack folded), its attempts, webhook deliveries, and a streaming job's chunks as they arrive.
// `live` is what the event stream said about this job (see app.js).
import { useEffect, useState } from 'preact/hooks';
import { ActionButton, SubmitForm, actions } from './actions.js';
import { views } from './api.js';
import { Attempts } from './attempts-view.js';
import { CopyButton, EndpointName, ErrorBox, StatusBadge, When, bytes, curlOf, duration, endpointNames, html, jobHref, pretty, workerHref } from './format.js';
import { endpointLabel } from './bulk-outcome.js';
import { Value, ValueActions } from './value-view.js';
import { LogLines } from './logs-view.js';
import { useNow } from './attempts-view.js';

/**
 * @typedef {import('./api-types.js').JobDetail} JobDetail
 * @typedef {import('./api-types.js').JobGpuView} JobGpuView
 * @typedef {import('./api-types.js').ChunkPreview} ChunkPreview
 * @typedef {import('./api-types.js').ChunkValues} ChunkValues
 * @typedef {import('./api-types.js').LiveJob} LiveJob
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').ShownError} ShownError
 * @typedef {import('./api-types.js').Navigate} Navigate
 * @typedef {import('./actions.js').JobAnswer} JobAnswer
 * @typedef {NonNullable<JobDetail['error']>} JobError
 */

/** The error payload; `clipped`: its fields the harness cut short (the whole error loads on demand). */
/** @param {{ endpointId: string, jobId: string, error: JobError, clipped: string[] | undefined }} props */
function ErrorPayload({ endpointId, jobId, error: shown, clipped }) {
  const [full, setFull] = useState(/** @type {JobError | undefined} */ (undefined));
  const error = full ?? shown;
  const { error_type, error_message, error_code, error_traceback, hostname, worker_id, runtime_version, ...rest } = error;
  return html`<section class="card failure" data-test="job-error">
    <h2>Error</h2>
    ${
      clipped && !full
        ? html`<p class="hint" data-test="error-clipped">Long fields cut short here: ${clipped.join(', ')}.</p>
      <${ValueActions} endpointId=${endpointId} jobId=${jobId} part="error" what="whole error" onLoaded=${setFull} />`
        : null
    }
    <p><strong>${error_type}</strong>${error_code ? html` <code>${error_code}</code>` : null}: ${error_message}</p>
    <p class="muted">worker ${worker_id || '—'} on ${hostname || '—'}${runtime_version ? `, runtime ${runtime_version}` : ''}</p>
    ${error_traceback ? html`<details><summary>Stack trace</summary><pre>${error_traceback}</pre></details>` : null}
    ${Object.keys(rest).length > 0 ? html`<details><summary>More fields</summary><pre>${pretty(rest)}</pre></details>` : null}
  </section>`;
}

/** Chunks listed one by one (the last ones the page holds). */
const LISTED_CHUNKS = 100;

/** @param {ChunkPreview} c */
const chunkText = (c) => (typeof c.output === 'string' ? c.output : pretty(c.output)) + (c.clippedBytes ? `… (${bytes(c.clippedBytes)})` : '');

/** All unread chunks, loaded on demand: { from, outputs }. */
/** @param {{ loaded: ChunkValues }} props */
function LoadedChunks({ loaded }) {
  return html`<details open><summary>All ${loaded.outputs.length} unread chunks (from chunk ${loaded.from})</summary>
    <div class="stream-text" data-test="stream-all">${loaded.outputs.map((o) => (typeof o === 'string' ? o : pretty(o))).join('')}</div></details>`;
}

/** A stream: the page holds its last chunks (app.js keeps at most KEPT_CHUNKS); earlier ones load on demand. */
/** @param {{ endpointId: string, live: LiveJob & { job: JobDetail } }} props `live.job`: the live one, else the one read over HTTP (JobView) */
function Chunks({ endpointId, live }) {
  const [loaded, setLoaded] = useState(/** @type {ChunkValues | undefined} */ (undefined));
  const count = Math.max(live.job.chunks, (live.chunks.at(-1)?.index ?? -1) + 1);
  if (count === 0) return null;
  const first = live.chunks[0]?.index ?? count;
  const notHeld = Math.max(0, first - live.job.chunkBase - live.missed);
  const listed = live.chunks.slice(-LISTED_CHUNKS);
  const objects = live.chunks.some((c) => typeof c.output !== 'string');
  return html`<section class="card" aria-live="polite">
    <h2>Stream (<span data-test="chunk-count">${count}</span> chunks)</h2>
    ${live.missed > 0 ? html`<p class="muted">${live.missed} chunks were read by a /stream client before this page could see them.</p>` : null}
    ${first > 0 && live.chunks.length > 0 ? html`<p class="hint" data-test="chunks-window">Showing chunks ${first}–${live.chunks.at(-1)?.index} of ${count}${notHeld > 0 ? `; ${notHeld} earlier ones are not held by the page` : ''}.</p>` : null}
    ${notHeld > 0 || live.skipped > 0 ? html`<${ValueActions} endpointId=${endpointId} jobId=${live.job.id} part="chunks" what="unread chunks" onLoaded=${setLoaded} />` : null}
    ${loaded ? html`<${LoadedChunks} loaded=${loaded} />` : null}
    ${
      objects
        ? // Chunks that are objects (a handler yielding { token, ... }) read as a list, never run together as `}{`.
          html`<ol class="stream-objects" data-test="stream-objects" start=${listed[0]?.index ?? 0}>${listed.map((c) => html`<li data-test="stream-object"><pre>${chunkText(c)}</pre></li>`)}</ol>`
        : html`<div class="stream-text" data-test="stream-text">${live.chunks.map(chunkText).join('')}</div>`
    }
    <details><summary>Chunks one by one${listed.length < live.chunks.length ? ` (the last ${listed.length})` : ''}</summary><ol start=${listed[0]?.index ?? 0}>
      ${listed.map((c) => html`<li data-test="chunk"><code>${typeof c.output === 'string' ? JSON.stringify(c.output) : pretty(c.output)}</code>${c.clippedBytes ? html` <span class="hint">cut short: ${bytes(c.clippedBytes)}</span>` : null}</li>`)}</ol></details>
  </section>`;
}

/** @param {number | null | undefined} p */
const percent = (p) => (p === null || p === undefined ? '—' : `${Math.round(p)} %`);

// The job's GPU summary in one line (in-process workers: the figures of the job-finished log line), or why there is none.
/** @param {{ gpu: JobGpuView | undefined }} props */
function GpuFact({ gpu }) {
  if (!gpu) return html`<dd>—</dd>`;
  if (!gpu.available) return html`<dd class="muted" data-test="job-gpu-none">none: ${gpu.reason}</dd>`;
  const s = gpu.summary;
  return html`<dd data-test="job-gpu">utilisation peak ${percent(s.peakUtilizationPercent)}, mean ${percent(s.meanUtilizationPercent)};
    memory peak ${bytes(s.peakMemoryUsedBytes)} (${s.samples} reading${s.samples === 1 ? '' : 's'})</dd>`;
}

// Per card, when there is a summary.
/** @param {{ gpu: JobGpuView | undefined }} props */
function GpuCards({ gpu }) {
  if (!gpu?.available) return null;
  const s = gpu.summary;
  return html`<section class="card" data-test="job-gpu-cards"><h2>GPU while it ran</h2>
    <table class="grid"><thead><tr><th>#</th><th>Name</th><th class="num">Peak utilisation</th><th class="num">Mean utilisation</th><th class="num">Peak memory</th></tr></thead>
      <tbody>${s.perGpu.map(
        (g) => html`<tr><td>${g.index}</td><td>${g.name}</td><td class="num">${percent(g.peakUtilizationPercent)}</td>
        <td class="num">${percent(g.meanUtilizationPercent)}</td><td class="num">${bytes(g.peakMemoryUsedBytes)}</td></tr>`,
      )}</tbody></table>
  </section>`;
}

/** @param {{ job: JobDetail, now: number }} props */
function Deliveries({ job, now }) {
  if (!job.webhook) return null;
  return html`<section class="card"><h2>Webhook</h2>
    ${
      job.webhookDeliveries.length === 0
        ? html`<p class="muted">${job.terminal ? 'Delivery under way (attempts are retried 10 s apart by default).' : 'Sent when the job ends.'}</p>`
        : html`<table class="grid"><thead><tr><th>URL</th><th>Delivered</th><th>Attempts</th><th>Last answer</th><th>At</th></tr></thead>
        <tbody>${job.webhookDeliveries.map((d) => html`<tr data-test="webhook-delivery"><td>${d.url}</td><td data-test="delivered">${d.delivered ? 'yes' : 'no (gave up)'}</td><td>${d.attempts}</td><td>${d.last}</td><td class="nowrap"><${When} at=${d.at} now=${now} test="webhook-at" /></td></tr>`)}</tbody></table>`
    }
  </section>`;
}

/**
 * Inputs up to this size open in the rerun editor; larger ones rerun as they are (a
 * textarea holding megabytes froze the page for seconds and took a second a keystroke).
 */
export const EDIT_LIMIT = 256 * 1024;

/** A rerun's request as JSON text: the input's text as the harness holds it, spliced in unparsed, and the job's policy. */
/** @param {string} inputText @param {unknown} policy */
export function rerunBody(inputText, policy) {
  return `{"input":${inputText}${policy !== undefined ? `,"policy":${JSON.stringify(policy)}` : ''}}`;
}

/**
 * Rerun a job: "as is" sends its exact input (read as text, never parsed or shown: any
 * size); "with edited input" opens the request in an editor when the input is at most
 * EDIT_LIMIT. Both go to /run and open the new job.
 */
/** @param {{ endpointId: string, job: JobDetail, overview: OverviewView, navigate: Navigate }} props */
function Rerun({ endpointId, job, overview, navigate }) {
  const names = endpointNames(overview?.endpoints);
  const [state, setState] = useState(
    /** @type {{ open: boolean, busy: boolean, error: ShownError | undefined, request: unknown }} */ ({
      open: false,
      busy: false,
      error: undefined,
      request: undefined,
    }),
  );
  const editable = job.input.bytes <= EDIT_LIMIT;
  const open = async () => {
    setState({ open: false, busy: true, error: undefined, request: undefined });
    try {
      const input = job.input.complete ? job.input.value : await views.value(endpointId, job.id, 'input');
      setState({ open: true, busy: false, error: undefined, request: { input, ...(job.policy ? { policy: job.policy } : {}) } });
    } catch (error) {
      setState({ open: false, busy: false, error: /** @type {ShownError} */ (error), request: undefined });
    }
  };
  const asIs = async () => {
    const text = job.input.complete ? JSON.stringify(job.input.value) : await views.valueText(endpointId, job.id, 'input');
    const answer = await actions.submit(endpointId, rerunBody(text, job.policy));
    navigate(jobHref(endpointId, answer.id));
    return answer;
  };
  return html`<${ActionButton} label=${`Rerun as is (${bytes(job.input.bytes)} input)`} test="rerun-as-is" run=${asIs}
      confirmText=${`Submit a new job on endpoint ${endpointLabel(endpointId, names)} with the input of ${job.id} (${bytes(job.input.bytes)})?`}
      describe=${(/** @type {JobAnswer} */ a) => `Submitted ${a.id} (${a.status})`} />
    <span class="action">
    <button type="button" onClick=${() => (state.open ? setState({ ...state, open: false }) : open())} disabled=${state.busy || !editable}
      title=${editable ? undefined : `the input is ${bytes(job.input.bytes)}: inputs over ${bytes(EDIT_LIMIT)} rerun as they are (download the input to edit it elsewhere)`}
      data-test="rerun-open">${state.open ? 'Close the rerun editor' : 'Rerun with edited input'}</button>
    ${editable ? null : html`<span class="hint" data-test="rerun-too-large">over ${bytes(EDIT_LIMIT)}: rerun as is</span>`}
    <${ErrorBox} error=${state.error} />
    ${
      state.open && overview
        ? html`<div class="rerun"><${SubmitForm} endpoints=${overview.endpoints} defaultEndpoint=${endpointId} overview=${overview} navigate=${navigate}
      initial=${state.request} title=${`Rerun ${job.id} with edited input`} test="rerun"
      confirm=${(/** @type {string} */ target) => `Submit a new job on endpoint ${endpointLabel(target, names)} with the edited input of ${job.id}?`} /></div>`
        : null
    }
  </span>`;
}

/**
 * When the job (and its result) is removed: while it runs or waits, at its ttl at the latest,
 * and once it ends its retention (how long depends on /run or /runsync) cuts that short;
 * once ended, whichever of the two comes first.
 */
/** @param {{ job: JobDetail, now: number }} props */
function Removal({ job, now }) {
  const { removal } = job;
  const kept = `${duration(removal.retentionMs)} after it ends (the retention of a ${job.kind === 'runsync' ? '/runsync' : '/run'} job)`;
  if (!job.terminal) {
    return html`<dd data-test="job-removal"><${When} iso=${removal.at} now=${now} test="job-removed-at" /> at the latest (its ttl);
      <span class="hint">once it ends it is kept ${kept}, whichever comes first</span></dd>`;
  }
  const why =
    removal.by === 'retention'
      ? `its retention: kept ${duration(removal.retentionMs)} after it ended, as a ${job.kind === 'runsync' ? '/runsync' : '/run'} job is`
      : `its ttl, which ends before its retention of ${duration(removal.retentionMs)} would`;
  return html`<dd data-test="job-removal"><${When} iso=${removal.at} now=${now} test="job-removed-at" /> <span class="hint" data-test="job-removal-why">(${why})</span></dd>`;
}

/**
 * The job as first read over HTTP: the page shows it (or the API's error) whether or not
 * the live stream is up; the stream's `job` messages replace it.
 */
/** @param {string} endpointId @param {string} jobId */
function useJob(endpointId, jobId) {
  // The state names the job it was read for: right after a move to another job the state is
  // still the previous job's until the effect runs, and the page must not show that job under this one's URL.
  const key = `${endpointId}/${jobId}`;
  const [state, setState] = useState(
    /** @type {{ key: string, job: JobDetail | undefined, error: ShownError | undefined }} */ ({ key, job: undefined, error: undefined }),
  );
  const [tries, setTries] = useState(0);
  useEffect(() => {
    let stale = false;
    setState({ key, job: undefined, error: undefined });
    views
      .job(endpointId, jobId)
      .then((job) => {
        if (!stale) setState({ key, job, error: undefined });
      })
      .catch((error) => {
        if (!stale) setState({ key, job: undefined, error });
      });
    return () => {
      stale = true;
    };
  }, [endpointId, jobId, tries]);
  const current = state.key === key ? state : { job: undefined, error: undefined };
  return { job: current.job, error: current.error, again: () => setTries((n) => n + 1) };
}

/** @param {{ endpointId: string, jobId: string, live: LiveJob, names: EndpointNames, overview: OverviewView, navigate: Navigate }} props */
export function JobView({ endpointId, jobId, live, names, overview, navigate }) {
  const read = useJob(endpointId, jobId);
  const now = useNow(1000);
  if (live.gone || read.error?.code === 'SW_JOB_NOT_FOUND')
    return html`<p class="error" role="alert" data-test="job-gone">Job ${jobId} is not on endpoint ${endpointId} (it never existed, or its ttl or retention ended).</p>`;
  const job = live.job?.id === jobId ? live.job : read.job;
  if (!job && read.error) {
    return html`<div><${ErrorBox} error=${read.error} /><button type="button" onClick=${read.again} data-test="job-reload">Try again</button></div>`;
  }
  if (!job) return html`<p class="muted" data-test="job-loading">Loading job ${jobId}…</p>`;
  const cancellable = job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS';
  const retryable = job.status === 'FAILED' || job.status === 'TIMED_OUT';
  return html`<div>
    <h1>Job <code data-test="job-id">${job.id}</code> <${CopyButton} text=${job.id} what="job id" /> <${StatusBadge} status=${job.status} /></h1>
    <p class="row">
      <${CopyButton} label="copy /status as curl" what="/status call as curl" test="copy-status-curl"
        text=${curlOf({ method: 'GET', path: `/v2/${encodeURIComponent(endpointId)}/status/${encodeURIComponent(job.id)}`, authenticated: overview.authenticated })} />
      <${CopyButton} label="copy /run of this input as curl" what="/run of this job's input as curl" test="copy-run-curl"
        text=${async () => curlOf({ method: 'POST', path: `/v2/${encodeURIComponent(endpointId)}/run`, authenticated: overview.authenticated, body: `{"input":${await views.valueText(endpointId, job.id, 'input')}}` })} />
    </p>
    <div class="row">
      <${ActionButton} label="Cancel" test="cancel" disabled=${!cancellable} title="only IN_QUEUE or IN_PROGRESS jobs can be cancelled"
        confirmText=${`Cancel job ${job.id} (${job.status}) on endpoint ${endpointLabel(endpointId, names)}?`}
        run=${() => actions.cancel(endpointId, job.id)} describe=${(/** @type {JobAnswer} */ a) => `Cancel answered ${a.status}`} />
      <${ActionButton} label="Retry" test="retry" disabled=${!retryable} title="only FAILED or TIMED_OUT jobs can be retried"
        run=${() => actions.retry(endpointId, job.id)} describe=${(/** @type {JobAnswer} */ a) => `Retry answered ${a.status}`} />
      <${Rerun} key=${job.id} endpointId=${endpointId} job=${job} overview=${overview} navigate=${navigate} />
    </div>
    <dl class="facts">
      <dt>Endpoint</dt><dd><${EndpointName} id=${endpointId} names=${names} /></dd>
      <dt>Kind</dt><dd>${job.kind}${job.openaiRoute ? ` (OpenAI ${job.openaiRoute})` : ''}</dd>
      <dt>Submitted</dt><dd><${When} iso=${job.submittedAt} now=${now} test="job-submitted" /></dd>
      <dt>Started</dt><dd><${When} iso=${job.startedAt} now=${now} /></dd>
      <dt>Ended</dt><dd><${When} iso=${job.endedAt} now=${now} /></dd>
      <dt>Queue wait (delayTime)</dt><dd data-test="delay-time">${duration(job.delayTime)}</dd>
      <dt>Execution (executionTime)</dt><dd data-test="execution-time">${duration(job.status === 'IN_PROGRESS' && job.startedAt ? Math.max(job.executionTime ?? 0, now - Date.parse(job.startedAt)) : job.executionTime)}</dd>
      <dt>Retries</dt><dd data-test="retries">${job.retries}</dd>
      <dt>Worker</dt><dd data-test="job-worker">${job.workerId ? html`<a href=${workerHref(endpointId, job.workerId)}><code>${job.workerId}</code></a> <${CopyButton} text=${job.workerId} what="worker id" />` : '—'}</dd>
      <dt>GPU</dt><${GpuFact} gpu=${job.gpu} />
      <dt>Removed</dt><${Removal} job=${job} now=${now} />
    </dl>
    <section class="card"><h2>Input</h2><${Value} key=${`input-${job.input.bytes}`} endpointId=${endpointId} jobId=${job.id} part="input" preview=${job.input} test="job-input" />
      ${job.policy ? html`<details><summary>Policy</summary><pre>${pretty(job.policy)}</pre></details>` : null}</section>
    <${Chunks} endpointId=${endpointId} live=${live.job ? live : { ...live, job, chunks: job.recentChunks }} />
    ${
      job.output !== undefined
        ? html`<section class="card"><h2>${job.terminal ? 'Output' : 'Progress'}</h2>
      <${Value} key=${`output-${job.output.bytes}-${job.status}`} endpointId=${endpointId} jobId=${job.id} part="output" preview=${job.output} test="job-output" /></section>`
        : null
    }
    ${job.error ? html`<${ErrorPayload} key=${job.status + job.retries} endpointId=${endpointId} jobId=${job.id} error=${job.error} clipped=${job.errorClipped} />` : null}
    <${GpuCards} gpu=${job.gpu} />
    <${Attempts} endpointId=${endpointId} job=${job} />
    <${LogLines} query=${{ endpoint: endpointId, job: job.id }} follow=${!job.terminal} title="Log lines of this job" test="job-logs"
      empty="No line for this job (yet): lines a worker logs for it (ctx.log, the runtime's job lines) show here, from an in-process worker and from the workers the launcher runs." />
    <${Deliveries} job=${job} now=${now} />
  </div>`;
}
