/**
 * @module metrics/bind-gpu
 * Copies GPU readings into the GPU gauges. Each reading replaces the previous one
 * whole: a GPU that stops answering, or a figure the tool stops reporting, disappears
 * from /metrics instead of showing its last value forever.
 */
import type { GpuReading, GpuReadResult } from '../gpu/reading.js';
import type { Metrics } from './create-metrics.js';

/** What bindGpuMetrics needs of a sampler (GpuSampler has it). */
export interface GpuReadingSource {
  latest(): GpuReadResult | undefined;
  onReading(listener: (result: GpuReadResult) => void): () => void;
}

type GpuFigureKey =
  | 'gpuUtilizationRatio'
  | 'gpuMemoryActivityRatio'
  | 'gpuMemoryUsedBytes'
  | 'gpuMemoryTotalBytes'
  | 'gpuTemperatureCelsius'
  | 'gpuPowerWatts'
  | 'gpuPowerLimitWatts';

const GPU_FIGURES: Array<[GpuFigureKey, (g: GpuReading) => number | null]> = [
  ['gpuUtilizationRatio', (g) => (g.utilizationPercent === null ? null : g.utilizationPercent / 100)],
  ['gpuMemoryActivityRatio', (g) => (g.memoryUtilizationPercent === null ? null : g.memoryUtilizationPercent / 100)],
  ['gpuMemoryUsedBytes', (g) => g.memoryUsedBytes],
  ['gpuMemoryTotalBytes', (g) => g.memoryTotalBytes],
  ['gpuTemperatureCelsius', (g) => g.temperatureCelsius],
  ['gpuPowerWatts', (g) => g.powerDrawWatts],
  ['gpuPowerLimitWatts', (g) => g.powerLimitWatts],
];

/** Set the GPU gauges from one read: its readings, or none (and a failure counted by reason). */
export function applyGpuReadings(metrics: Metrics, result: GpuReadResult): void {
  for (const [key] of GPU_FIGURES) metrics[key].reset();
  metrics.gpuReadingsAvailable.set(result.ok ? 1 : 0);
  if (!result.ok) {
    metrics.gpuReadFailuresTotal.inc({ reason: result.reason });
    return;
  }
  for (const gpu of result.gpus) {
    const labels = { index: String(gpu.index), uuid: gpu.uuid, name: gpu.name };
    for (const [key, figure] of GPU_FIGURES) {
      const value = figure(gpu);
      if (value !== null) metrics[key].set(labels, value);
    }
  }
}

/**
 * Keep the GPU gauges in step with a sampler: applies its latest read now (if any) and
 * every read after. Returns the function that unbinds. Start the sampler (or open
 * windows) for it to read; binding alone does not poll.
 */
export function bindGpuMetrics(metrics: Metrics, source: GpuReadingSource): () => void {
  const latest = source.latest();
  if (latest) applyGpuReadings(metrics, latest);
  return source.onReading((result) => applyGpuReadings(metrics, result));
}
