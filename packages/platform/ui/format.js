// @ts-check
// @module ui/format
// Small display helpers shared by the views.
import { h } from 'preact';
import htm from 'htm';
import { useState } from 'preact/hooks';

/**
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {import('./api-types.js').EndpointHealth} EndpointHealth
 * @typedef {import('./api-types.js').EndpointNames} EndpointNames
 * @typedef {import('./api-types.js').JobStatus} JobStatus
 * @typedef {import('./api-types.js').ShownError} ShownError
 */

export const html = htm.bind(h);

/** @type {JobStatus[]} */
export const STATES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** A duration in ms as "850 ms", "12.3 s", "4 min 2 s", "30 min". */
/** @param {number | null | undefined} ms */
export function duration(ms) {
  if (ms === undefined || ms === null) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round((ms % 60_000) / 1000);
  // Whole minutes (a retention, a timeout) read "30 min", not "30 min 0 s".
  return seconds === 0 ? `${Math.floor(ms / 60_000)} min` : `${Math.floor(ms / 60_000)} min ${seconds} s`;
}

/** How long ago `ms` was, short: "12 s ago", "4 min ago", "3 h ago", "2 d ago" ("in 5 s" for a time a second or more ahead). */
/** @param {number} ms @param {number} now */
export function ago(ms, now) {
  // Under a second ahead is this page's clock and the harness's a hair apart, not the future: "0 s ago".
  const d = now - ms > -1000 ? Math.max(0, now - ms) : now - ms;
  const a = Math.abs(d);
  const text =
    a < 60_000
      ? `${Math.round(a / 1000)} s`
      : a < 3_600_000
        ? `${Math.floor(a / 60_000)} min`
        : a < 86_400_000
          ? `${Math.floor(a / 3_600_000)} h`
          : `${Math.floor(a / 86_400_000)} d`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

/** When's formatters, made once: made per time shown, each line of a long log made three of its own on each render. */
const ZONE = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' });
const DAY = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const TIME_MS = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });

/** @param {{ iso?: string | undefined, at?: number | undefined }} time */
function dateOf({ iso, at }) {
  const d = at !== undefined ? new Date(at) : iso ? new Date(iso) : undefined;
  return d && !Number.isNaN(d.getTime()) ? d : undefined;
}

/** @param {Date} d @param {boolean} ms */
function clockText(d, ms) {
  const zone = ZONE.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? '';
  return `${DAY.format(d)} ${(ms ? TIME_MS : TIME).format(d)} ${zone}`;
}

/**
 * When's format as plain text, for a tooltip or a banner: "25 Nov 18:40:02 UTC · 3 min ago";
 * "—" for no time.
 */
/** @param {{ iso?: string | undefined, at?: number | undefined, now: number, ms?: boolean }} props */
export function whenText({ iso, at, now, ms = false }) {
  const d = dateOf({ iso, at });
  return d ? `${clockText(d, ms)} · ${ago(d.getTime(), now)}` : '—';
}

/**
 * A time as every view shows it, one format: date, clock time with its zone, and its age
 * ("25 Nov 18:40:02 UTC · 3 min ago"); the ISO 8601 time (UTC) on hover. `iso` or `at`
 * (epoch ms) gives the time; `ms` adds its milliseconds (log lines: "18:40:02.123").
 */
/** @param {{ iso?: string | undefined, at?: number | undefined, now: number, test?: string, ms?: boolean }} props */
export function When({ iso, at, now, test, ms = false }) {
  const d = dateOf({ iso, at });
  if (!d) return html`<span class="muted" data-test=${test}>—</span>`;
  const full = d.toISOString();
  return html`<time datetime=${full} title=${full} data-test=${test}>${clockText(d, ms)} <span class="muted">· ${ago(d.getTime(), now)}</span></time>`;
}

/** @param {number | null | undefined} n */
export function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** @param {unknown} value */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

/** @param {{ status: string }} props */
export function StatusBadge({ status }) {
  return html`<span class=${`badge s-${status}`} data-test="status">${status}</span>`;
}

/** An API error as the API gave it: code and message, and each issue the API listed (e.g. the input schema's). */
/** @param {{ error: ShownError | undefined }} props */
export function ErrorBox({ error }) {
  if (!error) return null;
  const details = /** @type {{ issues?: unknown } | undefined} */ (error.details);
  /** @type {Array<{ path?: string, message?: string, received?: unknown }>} */
  const issues = Array.isArray(details?.issues) ? details.issues : [];
  return html`<div class="error" role="alert" data-test="error">
    <strong>${error.code ?? 'Error'}</strong>${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}
    ${
      issues.length > 0
        ? html`<ul class="issues" data-test="error-issues">${issues.map((i) => html`<li><code>${i.path}</code>: ${i.message}${i.received !== undefined ? html` <span class="muted">(got ${i.received})</span>` : null}</li>`)}</ul>`
        : null
    }
  </div>`;
}

/** A small button that copies `text` (an id, a curl command) to the clipboard, and says so. */
/** `text`: the text, or a function answering it (a value read from the harness on the click). */
/** @param {{ text: string | (() => Promise<string>), what: string, label?: string, test?: string }} props */
export function CopyButton({ text, what, label = 'copy', test = 'copy' }) {
  const [copied, setCopied] = useState(/** @type {string | undefined} */ (undefined));
  const copy = async () => {
    let value = '';
    try {
      value = typeof text === 'string' ? text : await text();
      await navigator.clipboard.writeText(value);
      setCopied('copied');
    } catch (error) {
      // No clipboard (a page over plain http on another host): the text is offered for Ctrl+C instead.
      if (value) window.prompt(`Copy the ${what}:`, value);
      setCopied(value ? undefined : `not copied: ${error instanceof Error ? error.message : String(error)}`);
    }
    setTimeout(() => setCopied(undefined), 1500);
  };
  return html`<button type="button" class="small copy" title=${`copy the ${what}`} aria-label=${`copy the ${what}`} data-test=${test} data-copy=${typeof text === 'string' ? text : undefined} onClick=${copy}>${copied ?? label}</button>`;
}

/** A shell word: the text in single quotes. @param {string} text */
const shellQuoted = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * A curl command for a queue API call: the key as $SERVERLESS_WORKER_API_KEY (never the key
 * itself) when the harness asks for one, a JSON body when given.
 * @param {{ method: 'GET' | 'POST', path: string, authenticated: boolean, body?: string }} call
 */
export function curlOf({ method, path, authenticated, body }) {
  const parts = [`curl${method === 'POST' ? ' -X POST' : ''} ${shellQuoted(`${location.origin}${path}`)}`];
  if (authenticated) parts.push('-H "Authorization: Bearer $SERVERLESS_WORKER_API_KEY"');
  if (body !== undefined) parts.push(`-H 'Content-Type: application/json' -d ${shellQuoted(body)}`);
  return parts.join(' \\\n  ');
}

/** @param {{ notice: string | undefined }} props */
export function Notice({ notice }) {
  if (!notice) return null;
  return html`<div class="notice" role="status" data-test="notice">${notice}</div>`;
}

/** @param {string} endpointId @param {string} jobId */
export function jobHref(endpointId, jobId) {
  return `#/endpoint/${encodeURIComponent(endpointId)}/job/${encodeURIComponent(jobId)}`;
}

/** @param {string} endpointId @param {string} workerId */
export function workerHref(endpointId, workerId) {
  return `#/endpoint/${encodeURIComponent(endpointId)}/worker/${encodeURIComponent(workerId)}`;
}

/** @param {string} endpointId */
export function endpointHref(endpointId) {
  return `#/endpoint/${encodeURIComponent(endpointId)}`;
}

/** An endpoint as people know it: its name (endpoints made through /v1) beside its id. `names`: id → name. */
/** @param {{ id: string, names?: EndpointNames, link?: boolean }} props */
export function EndpointName({ id, names, link = true }) {
  const name = names?.[id];
  const label = name ?? id;
  return html`<span class="endpoint-name">${link ? html`<a href=${endpointHref(id)}>${label}</a>` : label}${name ? html` <code class="muted" data-test="endpoint-id">${id}</code>` : null}</span>`;
}

/** Endpoint names by id, from the overview's rows. */
/** @param {EndpointRow[] | undefined} endpoints @returns {EndpointNames} */
export function endpointNames(endpoints) {
  return Object.fromEntries((endpoints ?? []).flatMap((e) => (e.name ? [[e.id, e.name]] : [])));
}

/** An endpoint's health: a badge (ok, warning, unhealthy) and why. */
/** @param {{ health: EndpointHealth | undefined, short?: boolean }} props */
export function HealthBadge({ health, short = false }) {
  if (!health) return null;
  return html`<span class="health" data-test="health"><span class=${`badge h-${health.state}`} title=${health.reason}>${health.state}</span>${short ? null : html` <span class="hint" data-test="health-reason">${health.reason}</span>`}</span>`;
}
