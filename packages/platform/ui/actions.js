// @ts-check
// @module ui/actions
// The page's actions go through the queue API itself, so results and errors are the
// API's own: submit (/run), cancel, retry, purge-queue.
import { useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { ErrorBox, Notice, html, jobHref, pretty } from './format.js';

/**
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').ShownError} ShownError
 * @typedef {import('./api-types.js').Navigate} Navigate
 * @typedef {import('./api-types.js').JobRef} JobRef
 * @typedef {import('./api-types.js').BulkOutcome} BulkOutcome
 * @typedef {{ id: string, status: string }} JobAnswer what /run, /cancel and /retry answer
 */

/** @param {string} endpointId */
const base = (endpointId) => `/v2/${encodeURIComponent(endpointId)}`;

export const actions = {
  /** @param {string} endpointId @param {unknown} body @returns {Promise<JobAnswer>} */
  submit: async (endpointId, body) => /** @type {JobAnswer} */ (await api('POST', `${base(endpointId)}/run`, body)),
  /** @param {string} endpointId @param {string} jobId @returns {Promise<JobAnswer>} */
  cancel: async (endpointId, jobId) => /** @type {JobAnswer} */ (await api('POST', `${base(endpointId)}/cancel/${encodeURIComponent(jobId)}`)),
  /** @param {string} endpointId @param {string} jobId @returns {Promise<JobAnswer>} */
  retry: async (endpointId, jobId) => /** @type {JobAnswer} */ (await api('POST', `${base(endpointId)}/retry/${encodeURIComponent(jobId)}`)),
  /** Cancel or retry these jobs (any endpoints) in one call. @param {'cancel' | 'retry'} action @param {JobRef[]} jobs @returns {Promise<BulkOutcome>} */
  bulk: async (action, jobs) => /** @type {BulkOutcome} */ (await api('POST', '/ui/api/jobs/bulk', { action, jobs })),
  /** @param {string} endpointId @returns {Promise<{ removed: number }>} */
  purge: async (endpointId) => /** @type {{ removed: number }} */ (await api('POST', `${base(endpointId)}/purge-queue`)),
};

/** A button running `run()`; shows the answer (`describe(answer)`) or the API's error. */
/**
 * @template T
 * @param {{ label: string, run: () => Promise<T>, describe?: (answer: T) => string, confirmText?: string, test: string, kind?: string, disabled?: boolean, title?: string }} props
 */
export function ActionButton({ label, run, describe, confirmText, test, kind = '', disabled = false, title }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  const [notice, setNotice] = useState(/** @type {string | undefined} */ (undefined));
  const onClick = async () => {
    if (confirmText && !window.confirm(confirmText)) return;
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      const answer = await run();
      setNotice(describe ? describe(answer) : 'Done');
    } catch (e) {
      setError(/** @type {ShownError} */ (e));
    } finally {
      setBusy(false);
    }
  };
  return html`<span class="action">
    <button type="button" class=${kind} onClick=${onClick} disabled=${busy || disabled} title=${disabled ? title : undefined} data-test=${test}>${label}</button>
    <${Notice} notice=${notice} /><${ErrorBox} error=${error} />
  </span>`;
}

/**
 * The form's example for an endpoint: the worker's test input when the harness was given
 * one, else an example made from the endpoint's input schema, else the default request.
 */
/**
 * @param {OverviewView} overview
 * @param {string} endpointId
 * @returns {{ request: unknown, source: string | undefined }}
 */
export function exampleFor(overview, endpointId) {
  if (overview.testInputGiven) return { request: overview.testInput, source: "the worker's test input (test_input.json)" };
  const fromSchema = overview.inputExamples?.[endpointId];
  if (fromSchema) return { request: fromSchema, source: `an example made from ${endpointId}'s input schema (/openapi.json)` };
  return { request: overview.testInput ?? { input: {} }, source: undefined };
}

/** The submit form: endpoint id and a JSON editor, prefilled with the worker's test input or an example from its input schema. */
/**
 * `confirm`: when given, the text of a confirm asked before the submit, for the endpoint chosen (a rerun asks; a new job does not).
 * @param {{ endpoints: EndpointRow[], defaultEndpoint?: string, overview: OverviewView, navigate: Navigate, initial?: unknown, title?: string, test?: string, confirm?: (endpointId: string) => string }} props
 */
export function SubmitForm({ endpoints, defaultEndpoint, overview, navigate, initial, title = 'Submit a job', test = 'submit', confirm }) {
  const firstEndpoint = defaultEndpoint ?? endpoints[0]?.id ?? Object.keys(overview.inputExamples ?? {})[0] ?? 'local';
  const [endpointId, setEndpointIdRaw] = useState(firstEndpoint);
  // `initial`: a request to start from (a rerun of a job) instead of the example.
  const [text, setText] = useState(() => pretty(initial ?? exampleFor(overview, firstEndpoint).request));
  // Another endpoint: its example replaces the text, unless the text was edited.
  /** @param {string} next */
  const setEndpointId = (next) => {
    if (text === pretty(exampleFor(overview, endpointId).request)) setText(pretty(exampleFor(overview, next).request));
    setEndpointIdRaw(next);
  };
  const source = initial ? undefined : exampleFor(overview, endpointId).source;
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  const [notice, setNotice] = useState(/** @type {string | undefined} */ (undefined));
  const [busy, setBusy] = useState(false);
  // The text as the editor holds it now: a submit right after an edit (a paste then Ctrl+Enter, a
  // script's fill then click) can come before preact re-renders, when `text` is still the old value.
  const editor = useRef(/** @type {HTMLTextAreaElement | null} */ (null));
  /** @param {Event} event */
  const onSubmit = async (event) => {
    event.preventDefault();
    setError(undefined);
    setNotice(undefined);
    let body;
    try {
      body = JSON.parse(editor.current?.value ?? text);
    } catch (e) {
      setError({ code: 'INVALID_JSON', message: `The request is not valid JSON: ${e instanceof Error ? e.message : String(e)}` });
      return;
    }
    if (confirm && !window.confirm(confirm(endpointId))) return;
    setBusy(true);
    try {
      const answer = await actions.submit(endpointId, body);
      setNotice(`Submitted ${answer.id} (${answer.status})`);
      navigate(jobHref(endpointId, answer.id));
    } catch (e) {
      setError(/** @type {ShownError} */ (e));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card submit" onSubmit=${onSubmit} aria-label=${title} data-test=${`${test}-form`}>
    <h2>${title}</h2>
    <label>Endpoint
      <input id=${initial ? 'rerun-endpoint' : 'submit-endpoint'} list="endpoint-ids" value=${endpointId} onInput=${(/** @type {InputEvent & { currentTarget: HTMLInputElement }} */ e) => setEndpointId(e.currentTarget.value)} required pattern="[A-Za-z0-9._\\-]{1,128}" />
      <datalist id="endpoint-ids">${endpoints.map((e) => html`<option value=${e.id} />`)}</datalist>
    </label>
    <label>Request (JSON: input, and optionally webhook, policy, s3Config)${source ? html` <span class="hint" data-test="example-source">prefilled from ${source}</span>` : null}
      <textarea ref=${editor} id=${initial ? 'rerun-json' : 'submit-json'} rows="8" spellcheck="false" value=${text} onInput=${(/** @type {InputEvent & { currentTarget: HTMLTextAreaElement }} */ e) => setText(e.currentTarget.value)}
        onKeyDown=${(/** @type {KeyboardEvent} */ e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void onSubmit(e);
        }}></textarea>
    </label>
    <div class="row"><button type="submit" class="primary" disabled=${busy} data-test=${test}>Submit (/run)</button>
      <span class="hint">Ctrl+Enter submits</span></div>
    <${Notice} notice=${notice} /><${ErrorBox} error=${error} />
  </form>`;
}
