// @ts-check
// @module ui/logs-view
// Log lines (one a row, in the order the harness gives them: by time, then by the order it
// captured them, so lines of one millisecond stay in order; pino lines parsed: log-line.js) of launched workers (the launcher's capture of their stdout and stderr,
// /ui/api/logs): a job's own lines on its page, a worker's tail on its page. Followed
// live: read again every FOLLOW_MS while `follow` holds (a running job, an open worker
// page), once more when it stops. A failed read shows the API's error and keeps the
// lines shown before.
import { useEffect, useRef, useState } from 'preact/hooks';
import { views } from './api.js';
import { useNow } from './attempts-view.js';
import { ErrorBox, html } from './format.js';
import { LogLine } from './log-line.js';

/**
 * @typedef {import('./api-types.js').LogsView} LogsView
 * @typedef {import('./api-types.js').ShownError} ShownError
 */

const FOLLOW_MS = 2000;
/** How often the lines' ages are written again (a long log is hundreds of lines: not every second). */
const AGE_MS = 5000;

/** `query`: { endpoint, worker?, job? }; `follow`: read again every FOLLOW_MS; `title`, `empty`: the texts. */
/** @param {{ query: { endpoint: string, worker?: string, job?: string }, follow: boolean, title: string, empty: string, test?: string }} props */
export function LogLines({ query, follow, title, empty, test = 'log-lines' }) {
  const [answer, setAnswer] = useState(/** @type {LogsView | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {ShownError | undefined} */ (undefined));
  const [tick, setTick] = useState(0);
  // Rendered again every AGE_MS (and on each read): the ages from the time of the render, never ahead of a line just read.
  useNow(AGE_MS);
  const now = Date.now();
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  // Following live opens at the newest line: the first lines shown scroll to the end.
  const opened = useRef(false);
  const search = new URLSearchParams(Object.entries({ max: '500', ...query }).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))).toString();
  useEffect(() => {
    let stale = false;
    views
      .logs(search)
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
  }, [search, tick, follow]);
  useEffect(() => {
    if (!follow) return undefined;
    const timer = setInterval(() => setTick((n) => n + 1), FOLLOW_MS);
    return () => clearInterval(timer);
  }, [follow]);
  // Keep the newest line in sight while following (from the first lines on), unless the reader scrolled up.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    if (follow && (!opened.current || el.scrollHeight - el.scrollTop - el.clientHeight < 80)) el.scrollTop = el.scrollHeight;
    opened.current = true;
  }, [answer]);
  const lines = answer?.lines ?? [];
  return html`<section class="card" data-test=${test}>
    <h2>${title}${follow ? html` <span class="hint">following live</span>` : null}</h2>
    <${ErrorBox} error=${error} />
    ${answer && !answer.launcher && !answer.inProcess ? html`<p class="muted">No log source: lines come from the workers the launcher runs (serverless-worker harness --image) and from an in-process worker (--serve-api).</p>` : null}
    ${(answer?.launcher || answer?.inProcess) && lines.length === 0 && !answer?.dropped ? html`<p class="muted">${empty}</p>` : null}
    ${answer?.dropped ? html`<p class="muted" data-test="log-dropped">Not every line of this job is kept: ${answer.dropped}.</p>` : null}
    ${lines.length > 0 ? html`<div class="log" ref=${box} data-test="log-box">${lines.map((l) => html`<${LogLine} key=${l.seq} line=${l} now=${now} />`)}</div>` : null}
  </section>`;
}
