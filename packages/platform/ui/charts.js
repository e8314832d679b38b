// @ts-check
// @module ui/charts
// Charts over the last minutes, drawn with uPlot from the points the harness sends:
// jobs per second, queue wait and execution time percentiles, GPU utilisation and
// memory per card (when the harness has GPU readings). Of all endpoints or one, over a
// chosen range; hovering a chart shows each line's value at that time in its legend.
// Values and axes are in readable units (850 ms, 12.3 s, 2 min 5 s); a percentile line
// runs on across intervals where no job ended (spanGaps) instead of breaking apart.
// The time axis reads on a short history too: ticks on whole seconds (1, 2, 5, 10 s ...
// apart, never fractions), each labelled with its clock time (14:03:05); with all endpoints chosen,
// jobs per second, the queue depth, and (when jobs of several endpoints ended in the range)
// the queue wait and execution time p95 are drawn per endpoint, one line each, named in the legend.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { duration, html } from './format.js';

/**
 * @typedef {import('./api-types.js').SeriesPoint} SeriesPoint
 * @typedef {import('./api-types.js').JobFigures} JobFigures
 * @typedef {import('./api-types.js').EndpointRow} EndpointRow
 * @typedef {(v: number) => string} Format
 */

const COLORS = ['#2f7ed8', '#e4572e', '#17a398', '#b07aa1', '#f2a541', '#6c8ea0'];

/** @type {Format} */
const rate = (v) => `${v >= 10 ? Math.round(v) : Number(v.toFixed(2))}/s`;
/** @type {Format} */
const count = (v) => String(Math.round(v));
/** @type {Format} */
const percent = (v) => `${Math.round(v)} %`;
/** @type {Format} */
const gib = (v) => `${Number(v.toFixed(1))} GiB`;

/** Values shown on a chart: a number in its unit, — for none. */
/** @param {Format} format @returns {(v: number | null | undefined) => string} */
const shown = (format) => (v) => (v === null || v === undefined ? '—' : format(v));

/**
 * One uPlot chart: `columns` is [times (s), ...one column per name]; `format` writes a
 * value in its unit (legend and axis); `stepped` draws steps (counts).
 */
/**
 * @param {{ title: string, unit: string, names: string[], columns: Array<Array<number | null>>, test: string, stepped?: boolean, format?: Format}} props
 */
export function Chart({ title, unit, names, columns, test, stepped = false, format = (v) => String(v) }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const plot = useRef(/** @type {uPlot | null} */ (null));
  // uPlot's data: the times, then a column per name (nulls where there is no value).
  const data = /** @type {uPlot.AlignedData} */ (/** @type {unknown} */ (columns));
  const key = `${names.join('|')}|${unit}`;
  useEffect(() => {
    const width = Math.max(260, (box.current?.clientWidth ?? 400) - 8);
    const label = shown(format);
    /** @type {uPlot.Options} */
    const options = {
      width,
      height: 190,
      scales: { x: { time: true } },
      axes: [
        // Whole-second ticks, labelled with the clock time: a history of a few seconds reads as times, not as fractions.
        {
          stroke: 'currentColor',
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          space: 70,
          incrs: TIME_STEPS,
          values: (u, splits) => splits.map((v) => clockLabel(v)),
        },
        // Room for the widest label ("12 min 30 s"), and labels far enough apart not to collide.
        { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, size: 76, space: 36, values: (u, splits) => splits.map((v) => label(v)) },
      ],
      series: [
        { value: (u, v) => (v === null || v === undefined ? '—' : new Date(v * 1000).toLocaleTimeString()) },
        ...names.map(
          (name, i) =>
            /** @type {uPlot.Series} */ ({
              label: name,
              stroke: COLORS[i % COLORS.length],
              width: 1.5,
              spanGaps: true,
              value: (u, v) => label(v),
              ...(stepped && uPlot.paths.stepped ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}),
            }),
        ),
      ],
      legend: { live: true },
      cursor: { points: { size: 6 } },
    };
    if (!box.current) return undefined;
    plot.current = new uPlot(options, data, box.current);
    const onResize = () => plot.current?.setSize({ width: Math.max(260, (box.current?.clientWidth ?? 400) - 8), height: 190 });
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [key]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [columns]);
  return html`<figure class="chart card" data-test=${test}><figcaption>${title}</figcaption><div ref=${box}></div></figure>`;
}

const RANGES = [1, 5, 10, 30, 60, 120];

/** The time axis's tick steps, in seconds: never under one second. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];

/** A tick's label: the clock time to the second, 24-hour (14:03:05). @param {number} seconds */
const clockLabel = (seconds) =>
  new Date(seconds * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/** The job figures of `point` for the chosen endpoint ('' = all); an endpoint with no job ended then has none. */
/** @param {SeriesPoint} point @param {string} endpointId @returns {JobFigures} */
function figuresOf(point, endpointId) {
  if (!endpointId) return point;
  return (
    point.endpoints?.[endpointId] ?? {
      jobsPerSecond: 0,
      failedPerSecond: 0,
      delayP50: null,
      delayP95: null,
      delayP99: null,
      execP50: null,
      execP95: null,
      execP99: null,
    }
  );
}

/** Endpoints drawn at once on a per-endpoint chart (those with the most, when there are more). */
const MAX_LINES = 6;

/**
 * Per endpoint, one column of `value(point, endpointId)`: the endpoints with the largest
 * totals first, at most MAX_LINES. Answers their ids and columns.
 * @param {readonly SeriesPoint[]} points @param {string[]} ids @param {(p: SeriesPoint, id: string) => number | null} value
 * @returns {{ ids: string[], columns: Array<Array<number | null>> }}
 */
function perEndpoint(points, ids, value) {
  const sum = (/** @type {string} */ id) => points.reduce((total, p) => total + (value(p, id) ?? 0), 0);
  const chosen = [...ids]
    .sort((a, b) => sum(b) - sum(a) || a.localeCompare(b))
    .slice(0, MAX_LINES)
    .sort();
  return { ids: chosen, columns: chosen.map((id) => points.map((p) => value(p, id))) };
}

/** The charts for `points` (SeriesPoint[], oldest first); `endpoints`: the overview's rows (the choice); `historyMinutes`: what the harness keeps. */
/** @param {{ points: readonly SeriesPoint[] | undefined, endpoints?: EndpointRow[], historyMinutes?: number }} props */
export function Charts({ points, endpoints = [], historyMinutes = 10 }) {
  const [endpointId, setEndpointId] = useState('');
  const [minutes, setMinutes] = useState(Math.min(10, historyMinutes));
  if (!points || points.length === 0) return html`<p class="muted">No chart data yet.</p>`;
  const since = (points.at(-1)?.t ?? 0) - minutes * 60_000;
  const inRange = points.filter((p) => p.t > since);
  const t = inRange.map((p) => p.t / 1000);
  /** @param {keyof JobFigures} name */
  const col = (name) => inRange.map((p) => figuresOf(p, endpointId)[name] ?? null);
  /** @type {Map<number, string>} */
  const cards = new Map();
  for (const p of inRange) for (const g of p.gpus) cards.set(g.index, g.name);
  /** @param {number} index @param {'utilizationPercent' | 'memoryUsedBytes'} figure */
  const gpuCol = (index, figure) => inRange.map((p) => p.gpus.find((g) => g.index === index)?.[figure] ?? null);
  const gpuNames = [...cards.entries()].map(([index, name]) => `GPU ${index} ${name}`);
  const ranges = RANGES.filter((m) => m <= historyMinutes);
  const names = Object.fromEntries(endpoints.map((e) => [e.id, e.name ?? e.id]));
  const ids = endpointId ? [endpointId] : endpoints.map((e) => e.id);
  // Queue depth: known from the points the live page took (none on a rebuilt history).
  const queues = perEndpoint(inRange, ids, (p, id) => (p.queued ? (p.queued[id] ?? 0) : null));
  const rates = perEndpoint(inRange, ids, (p, id) => p.endpoints?.[id]?.jobsPerSecond ?? 0);
  // Wait and execution by endpoint: those of the busiest endpoints with a job ended in the range (an idle one has no time to draw).
  const timed = endpointId ? [] : rates.ids.filter((id) => inRange.some((p) => p.endpoints?.[id] !== undefined));
  /** @param {'delayP95' | 'execP95'} figure */
  const timedColumns = (figure) => timed.map((id) => inRange.map((p) => p.endpoints?.[id]?.[figure] ?? null));
  const timedNames = timed.map((id) => names[id] ?? id);
  return html`<div>
    <form class="filters" aria-label="Charts" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
      <label>Endpoint <select id="chart-endpoint" value=${endpointId} onChange=${(/** @type {Event & { currentTarget: HTMLSelectElement }} */ e) => setEndpointId(e.currentTarget.value)}>
        <option value="">all endpoints</option>${endpoints.map((e) => html`<option value=${e.id}>${e.name ? `${e.name} (${e.id})` : e.id}</option>`)}</select></label>
      <label>Range <select id="chart-range" value=${String(minutes)} onChange=${(/** @type {Event & { currentTarget: HTMLSelectElement }} */ e) => setMinutes(Number(e.currentTarget.value))}>
        ${ranges.map((m) => html`<option value=${String(m)}>last ${m} min</option>`)}</select></label>
      <span class="hint">hover a chart for the values at that time</span>
    </form>
    <div class="charts">
      <${Chart} title="Jobs ended per second" unit="jobs/s" names=${['ended', 'failed']} columns=${[t, col('jobsPerSecond'), col('failedPerSecond')]} format=${rate} test="chart-rate" />
      ${!endpointId && rates.ids.length > 1 ? html`<${Chart} title="Jobs ended per second, by endpoint" unit="jobs/s by endpoint" names=${rates.ids.map((id) => names[id] ?? id)} columns=${[t, ...rates.columns]} format=${rate} test="chart-rate-endpoints" />` : null}
      <${Chart} title=${`Queue depth (IN_QUEUE)${endpointId ? '' : ', by endpoint'}`} unit="queued" names=${queues.ids.map((id) => names[id] ?? id)} columns=${[t, ...queues.columns]} format=${count} stepped=${true} test="chart-queue" />
      <${Chart} title="Queue wait (delayTime)" unit="wait" names=${['p50', 'p95', 'p99']} columns=${[t, col('delayP50'), col('delayP95'), col('delayP99')]} format=${duration} test="chart-wait" />
      <${Chart} title="Execution time" unit="execution" names=${['p50', 'p95', 'p99']} columns=${[t, col('execP50'), col('execP95'), col('execP99')]} format=${duration} test="chart-exec" />
      ${
        timed.length > 1
          ? html`<${Chart} title="Queue wait p95, by endpoint" unit="wait p95 by endpoint" names=${timedNames} columns=${[t, ...timedColumns('delayP95')]} format=${duration} test="chart-wait-endpoints" />
          <${Chart} title="Execution time p95, by endpoint" unit="execution p95 by endpoint" names=${timedNames} columns=${[t, ...timedColumns('execP95')]} format=${duration} test="chart-exec-endpoints" />`
          : null
      }
      ${
        cards.size > 0
          ? html`<${Chart} title="GPU utilisation" unit="%" names=${gpuNames} columns=${[t, ...[...cards.keys()].map((i) => gpuCol(i, 'utilizationPercent'))]} format=${percent} test="chart-gpu-util" />
          <${Chart} title="GPU memory used" unit="GiB" names=${gpuNames}
            columns=${[t, ...[...cards.keys()].map((i) => gpuCol(i, 'memoryUsedBytes').map((b) => (b === null ? null : b / 2 ** 30)))]} format=${gib} test="chart-gpu-mem" />`
          : html`<p class="muted chart-note">No GPU readings: GPU charts appear when the harness has a GPU reading source (an in-process worker with GPU sampling, e.g. --serve-api on a GPU machine).</p>`
      }
    </div>
  </div>`;
}
