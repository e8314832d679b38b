// @ts-check
// @module ui/log-line
// One log line as people read it: a pino line (the runtime's, ctx.log's) parsed into its
// level, message and fields (the fields on demand); any other line as written. The level
// colours the line (a pino info line on stderr is not an error); a line that is not pino
// is coloured by its stream. An in-process worker's job lines (stream: their level) are
// read the same way. Its time is written as every time on the dashboard is (When: date,
// clock time with its zone, age), to the millisecond.
import { When, html, pretty } from './format.js';

/** pino's numeric levels. */
/** @type {Record<number, string>} */
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Keys every pino line has, not shown as fields. */
const PINO_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

/**
 * @typedef {{ level: string, time: number | undefined, msg: string, fields: Record<string, unknown> }} PinoLine
 */

/** `text` as a pino line, or undefined when it is not one (not a JSON object with a level). */
/** @param {string} text @returns {PinoLine | undefined} */
export function parsePino(text) {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return undefined;
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = /** @type {Record<string, unknown>} */ (parsed);
  const level = typeof record.level === 'number' ? (LEVELS[record.level] ?? String(record.level)) : typeof record.level === 'string' ? record.level : undefined;
  if (level === undefined) return undefined;
  /** @type {Record<string, unknown>} */
  const fields = {};
  for (const [key, value] of Object.entries(record)) if (!PINO_KEYS.has(key)) fields[key] = value;
  const err = /** @type {{ message?: unknown } | undefined} */ (typeof fields.err === 'object' && fields.err !== null ? fields.err : undefined);
  const msg = typeof record.msg === 'string' ? record.msg : typeof err?.message === 'string' ? err.message : '';
  return { level, time: typeof record.time === 'number' ? record.time : undefined, msg, fields };
}

/**
 * A line an in-process worker logged for a job (job-log-tap.ts: its stream is the level,
 * its text the message then the fields' JSON): as a parsed line.
 * @param {string} level @param {string} text @returns {PinoLine}
 */
export function parseTapped(level, text) {
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) {
    if (at > 0 && text[at - 1] !== ' ') continue;
    try {
      const fields = JSON.parse(text.slice(at));
      if (typeof fields === 'object' && fields !== null && !Array.isArray(fields)) return { level, time: undefined, msg: text.slice(0, at).trimEnd(), fields };
    } catch {
      // Not the fields' JSON: look further.
    }
  }
  return { level, time: undefined, msg: text, fields: {} };
}

const LEVEL_NAMES = new Set(Object.values(LEVELS));

/** One line: time, worker, stream, then the pino level, message and fields, or the line as written. `now`: for the time's age. */
/** @param {{ line: { at: number, workerId: string, stream: string, line: string }, now: number }} props */
export function LogLine({ line, now }) {
  const tapped = LEVEL_NAMES.has(line.stream);
  const pino = tapped ? parseTapped(line.stream, line.line) : parsePino(line.line);
  // An in-process line's stream is its level, shown once as the level below.
  const meta = html`<span class="muted log-meta"><${When} at=${line.at} now=${now} ms=${true} test="log-at" /> ${line.workerId}${tapped ? '' : ` ${line.stream}`}</span>`;
  if (!pino) return html`<div class=${`log-line log-${line.stream}`} data-test="log-line">${meta} <span class="log-text">${line.line}</span></div>`;
  const count = Object.keys(pino.fields).length;
  // One space between the stream and the level, inside the template's line: htm drops whitespace that holds a
  // line break, and "stderr" then ran into "WARN" ("stderrWARN") in the page's text.
  return html`<div class=${`log-line log-level-${pino.level}`} data-test="log-line" data-level=${pino.level}>${meta} <span class="log-level" data-test="log-level">${pino.level.toUpperCase()}</span> <span class="log-text" data-test="log-message">${pino.msg}</span>
    ${count > 0 ? html` <details class="log-fields"><summary data-test="log-fields">${count} field${count === 1 ? '' : 's'}</summary><pre>${pretty(pino.fields)}</pre></details>` : null}</div>`;
}
