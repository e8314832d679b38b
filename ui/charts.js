// @module ui/charts
// Charts over the last minutes, drawn with uPlot from the points the harness sends:
// jobs per second, queue wait and execution time percentiles, GPU utilisation and
// memory per card (when the harness has GPU readings).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { html } from './format.js';

const COLORS = ['#2f7ed8', '#e4572e', '#17a398', '#b07aa1', '#f2a541', '#6c8ea0'];

/** One uPlot chart: `columns` is [times (s), ...one column per name]; `stepped` draws steps (counts). */
export function Chart({ title, unit, names, columns, test, stepped = false }) {
  const box = useRef(null);
  const plot = useRef(null);
  const key = names.join('|');
  useEffect(() => {
    const width = Math.max(280, (box.current?.clientWidth ?? 400) - 8);
    const options = {
      width,
      height: 170,
      scales: { x: { time: true } },
      axes: [{ stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } }, { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, label: unit, size: 55 }],
      series: [{}, ...names.map((name, i) => ({ label: name, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false, ...(stepped ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}) }))],
      legend: { live: false },
    };
    plot.current = new uPlot(options, columns, box.current);
    const onResize = () => plot.current?.setSize({ width: Math.max(280, (box.current?.clientWidth ?? 400) - 8), height: 170 });
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [key]);
  useEffect(() => {
    plot.current?.setData(columns);
  }, [columns]);
  return html`<figure class="chart card" data-test=${test}><figcaption>${title}</figcaption><div ref=${box}></div></figure>`;
}

/** The charts for `points` (SeriesPoint[], oldest first). */
export function Charts({ points }) {
  if (!points || points.length === 0) return html`<p class="muted">No chart data yet.</p>`;
  const t = points.map((p) => p.t / 1000);
  const col = (name) => points.map((p) => p[name]);
  const cards = new Map();
  for (const p of points) for (const g of p.gpus) cards.set(g.index, g.name);
  const gpuCol = (index, figure) => points.map((p) => p.gpus.find((g) => g.index === index)?.[figure] ?? null);
  const gpuNames = [...cards.entries()].map(([index, name]) => `GPU ${index} ${name}`);
  return html`<div class="charts">
    <${Chart} title="Jobs ended per second" unit="jobs/s" names=${['ended', 'failed']} columns=${[t, col('jobsPerSecond'), col('failedPerSecond')]} test="chart-rate" />
    <${Chart} title="Queue wait (delayTime), ms" unit="ms" names=${['p50', 'p95', 'p99']} columns=${[t, col('delayP50'), col('delayP95'), col('delayP99')]} test="chart-wait" />
    <${Chart} title="Execution time, ms" unit="ms" names=${['p50', 'p95', 'p99']} columns=${[t, col('execP50'), col('execP95'), col('execP99')]} test="chart-exec" />
    ${cards.size > 0
      ? html`<${Chart} title="GPU utilisation, %" unit="%" names=${gpuNames} columns=${[t, ...[...cards.keys()].map((i) => gpuCol(i, 'utilizationPercent'))]} test="chart-gpu-util" />
        <${Chart} title="GPU memory used, GiB" unit="GiB" names=${gpuNames}
          columns=${[t, ...[...cards.keys()].map((i) => gpuCol(i, 'memoryUsedBytes').map((b) => (b === null ? null : b / 2 ** 30)))]} test="chart-gpu-mem" />`
      : html`<p class="muted chart-note">No GPU readings: GPU charts appear when the harness has a GPU reading source (an in-process worker with GPU sampling, e.g. --serve-api on a GPU machine).</p>`}
  </div>`;
}
