// @ts-check
// @module ui/api
// The dashboard's calls to the harness: every request carries the API key from
// sessionStorage (or localStorage, remembered on this device) in the Authorization header (never in a URL). Errors come back as the
// API gives them ({ error: { code, message } }). Live updates: one Server-Sent Events
// stream, read with fetch (EventSource cannot send the header), reconnected on a drop.

/**
 * @typedef {import('./api-types.js').LiveMessage} LiveMessage
 * @typedef {import('./api-types.js').OverviewView} OverviewView
 * @typedef {import('./api-types.js').JobsPage} JobsPage
 * @typedef {import('./api-types.js').AllJobsPage} AllJobsPage
 * @typedef {import('./api-types.js').MatchingJobs} MatchingJobs
 * @typedef {import('./api-types.js').JobDetail} JobDetail
 * @typedef {import('./api-types.js').JobAttemptsView} JobAttemptsView
 * @typedef {import('./api-types.js').LogsView} LogsView
 * @typedef {import('./api-types.js').ScaleEventsView} ScaleEventsView
 * @typedef {'input' | 'output' | 'error' | 'chunks'} ValuePart
 */

const KEY_NAME = 'serverless-worker-api-key';

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * The API key: this tab's sessionStorage, or localStorage when the user asked to be
 * remembered on this device (new tabs then need no login). Log out clears both.
 */
export const keyStore = {
  get: () => sessionStorage.getItem(KEY_NAME) ?? localStorage.getItem(KEY_NAME) ?? '',
  /** @param {string} key @param {boolean} [remember] also keep it in localStorage */
  set: (key, remember = false) => {
    sessionStorage.setItem(KEY_NAME, key);
    if (remember) localStorage.setItem(KEY_NAME, key);
    else localStorage.removeItem(KEY_NAME);
  },
  clear: () => {
    sessionStorage.removeItem(KEY_NAME);
    localStorage.removeItem(KEY_NAME);
  },
};

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when nothing answered
   * @param {string} code
   * @param {string} message
   * @param {unknown} [details]
   */
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** @param {Record<string, string>} [extra] @returns {Record<string, string>} */
function headers(extra = {}) {
  const key = keyStore.get();
  return { ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra };
}

/**
 * One call; answers the parsed JSON body (what the route answers: `views` below names
 * it for the dashboard's routes) or throws ApiError.
 * @param {'GET' | 'POST'} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON (a string as it is)
 * @returns {Promise<unknown>}
 */
export async function api(method, path, body) {
  /** @type {Response} */
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: headers(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `The harness did not answer: ${messageOf(error)}`);
  }
  const text = await response.text();
  /** @type {any} */
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = json?.error;
    throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? text ?? response.statusText, error?.details);
  }
  return json;
}

/**
 * GET one of the dashboard's routes, answering what the harness declares it answers.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
const getView = (path) => /** @type {Promise<T>} */ (api('GET', path));

/** @param {string} endpointId @param {string} jobId */
const jobPath = (endpointId, jobId) => `/ui/api/endpoints/${encodeURIComponent(endpointId)}/jobs/${encodeURIComponent(jobId)}`;

/** The dashboard's reads (routes.ts), each with the type of its answer (api-types.d.ts). */
export const views = {
  /** @returns {Promise<OverviewView>} */
  overview: () => getView('/ui/api/overview'),
  /** @param {string} endpointId @param {string} query the list's query string @returns {Promise<JobsPage>} */
  jobs: (endpointId, query) => getView(`/ui/api/endpoints/${encodeURIComponent(endpointId)}/jobs?${query}`),
  /** Every endpoint's jobs (or those the query's `endpoint` names) in one list. @param {string} query @returns {Promise<AllJobsPage>} */
  allJobs: (query) => getView(`/ui/api/jobs?${query}`),
  /**
   * Every job the list's filter matches (its offset and limit ignored), for a bulk action.
   * @param {string} query the list's query string @param {string | undefined} endpointId one endpoint's (else the query's `endpoint`, or all)
   * @returns {Promise<MatchingJobs>}
   */
  matchingJobs: (query, endpointId) => {
    const params = new URLSearchParams(query);
    params.delete('offset');
    params.delete('limit');
    if (endpointId !== undefined) params.set('endpoint', endpointId);
    return getView(`/ui/api/jobs/matching?${params}`);
  },
  /** @param {string} endpointId @param {string} jobId @returns {Promise<JobDetail>} */
  job: (endpointId, jobId) => getView(jobPath(endpointId, jobId)),
  /** @param {string} endpointId @param {string} jobId @returns {Promise<JobAttemptsView>} */
  attempts: (endpointId, jobId) => getView(`${jobPath(endpointId, jobId)}/attempts`),
  /** The path of one of a job's values whole (JSON: the value, or ChunkValues for `chunks`). @param {string} endpointId @param {string} jobId @param {ValuePart} part */
  valuePath: (endpointId, jobId, part) => `${jobPath(endpointId, jobId)}/values/${part}`,
  /** @param {string} endpointId @param {string} jobId @param {ValuePart} part @returns {Promise<unknown>} */
  value: (endpointId, jobId, part) => getView(views.valuePath(endpointId, jobId, part)),
  /**
   * One of a job's values as the JSON text the harness holds, unparsed: a rerun sends it on
   * as it is (a 20 MB input is never parsed or drawn by the page).
   * @param {string} endpointId @param {string} jobId @param {ValuePart} part @returns {Promise<string>}
   */
  valueText: async (endpointId, jobId, part) => {
    /** @type {Response} */
    let response;
    try {
      response = await fetch(views.valuePath(endpointId, jobId, part), { headers: headers() });
    } catch (error) {
      throw new ApiError(0, 'NETWORK', `The harness did not answer: ${messageOf(error)}`);
    }
    const text = await response.text();
    if (!response.ok) {
      /** @type {any} */
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      throw new ApiError(
        response.status,
        body?.error?.code ?? `HTTP_${response.status}`,
        body?.error?.message ?? (text || response.statusText),
        body?.error?.details,
      );
    }
    return text;
  },
  /** @param {string} search the query string @returns {Promise<LogsView>} */
  logs: (search) => getView(`/ui/api/logs?${search}`),
  /** @param {number} max @returns {Promise<ScaleEventsView>} */
  scaleEvents: (max) => getView(`/ui/api/scale-events?max=${max}`),
};

/**
 * Fetch `path` (with the key) and save what it answers as the file `filename`: a link
 * cannot carry the Authorization header, so the body is read here and handed to the
 * browser as a blob. Throws ApiError as `api` does.
 */
/**
 * @param {string} path
 * @param {string} filename
 */
export async function download(path, filename) {
  /** @type {Response} */
  let response;
  try {
    response = await fetch(path, { headers: headers() });
  } catch (error) {
    throw new ApiError(0, 'NETWORK', `The harness did not answer: ${messageOf(error)}`);
  }
  if (!response.ok) {
    /** @type {any} */
    const body = await response.json().catch(() => undefined);
    throw new ApiError(response.status, body?.error?.code ?? `HTTP_${response.status}`, body?.error?.message ?? response.statusText, body?.error?.details);
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Split an SSE text stream into { event, data } frames.
 * @param {{ text: string }} buffer
 * @returns {Generator<LiveMessage>}
 */
function* frames(buffer) {
  let at;
  while ((at = buffer.text.indexOf('\n\n')) >= 0) {
    const block = buffer.text.slice(0, at);
    buffer.text = buffer.text.slice(at + 2);
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    // The harness sends only LiveEvents' names, each with its data (page-views.ts).
    if (data.length > 0) yield /** @type {LiveMessage} */ ({ event, data: JSON.parse(data.join('\n')) });
  }
}

/**
 * Follow /ui/api/events (with `query`, e.g. { endpoint, job }) until `signal` aborts;
 * `onEvent({ event, data })` for each frame, `onState('open' | 'retrying' | error)`: an
 * error whose status is 0 when nothing answered, else the API's error.
 */
/**
 * @param {{ endpoint?: string, job?: string }} query
 * @param {(message: LiveMessage) => void} onEvent
 * @param {(state: 'open' | 'retrying' | ApiError) => void} onState
 * @param {AbortSignal} signal
 */
export async function followEvents(query, onEvent, onState, signal) {
  const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined)).toString();
  while (!signal.aborted) {
    /** @type {Response} */
    let response;
    try {
      response = await fetch(`/ui/api/events${search ? `?${search}` : ''}`, { headers: headers(), signal });
    } catch (error) {
      if (signal.aborted) return;
      // Nothing answered: the page says so plainly (app.js shows a banner) and tries again.
      onState(new ApiError(0, 'NETWORK', `The harness did not answer: ${messageOf(error)}`));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    try {
      if (!response.ok) {
        /** @type {any} */
        const body = await response.json().catch(() => undefined);
        onState(new ApiError(response.status, body?.error?.code ?? `HTTP_${response.status}`, body?.error?.message ?? response.statusText));
        if (response.status === 401) return;
      } else {
        onState('open');
        if (!response.body) throw new Error('the event stream answered no body');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const buffer = { text: '' };
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer.text += value;
          for (const frame of frames(buffer)) onEvent(frame);
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    onState('retrying');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
