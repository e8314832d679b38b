/**
 * @module gpu/window-summary
 * Folding the readings taken while one job ran into the figures its job-finished log
 * line carries. Running sums, not stored samples, so a week-long job costs the same.
 */
import type { GpuReading } from './reading.js';

export interface GpuWindowGpuSummary {
  index: number;
  uuid: string;
  name: string;
  peakUtilizationPercent: number | null;
  meanUtilizationPercent: number | null;
  peakMemoryUsedBytes: number | null;
}

export interface GpuWindowSummary {
  /** Readings taken while the window was open. */
  samples: number;
  /** Highest utilisation of any one GPU in any reading; null when no GPU reported it (MIG). */
  peakUtilizationPercent: number | null;
  /** Mean over every GPU and reading that reported utilisation. */
  meanUtilizationPercent: number | null;
  /** Highest memory in use, summed over the job's GPUs, in any one reading. */
  peakMemoryUsedBytes: number | null;
  perGpu: GpuWindowGpuSummary[];
}

interface Running {
  index: number;
  uuid: string;
  name: string;
  peakUtil: number | null;
  utilSum: number;
  utilCount: number;
  peakMemory: number | null;
}

const maxOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));

export interface GpuWindowAccumulator {
  add(gpus: readonly GpuReading[]): void;
  /** The summary so far, or undefined when no reading was added. */
  summary(): GpuWindowSummary | undefined;
}

/** An empty accumulator. */
export function createWindowAccumulator(): GpuWindowAccumulator {
  let samples = 0;
  let peakMemory: number | null = null;
  const perGpu = new Map<string, Running>();
  return {
    add(gpus) {
      samples += 1;
      let memory: number | null = null;
      for (const gpu of gpus) {
        const running = perGpu.get(gpu.uuid) ?? {
          index: gpu.index,
          uuid: gpu.uuid,
          name: gpu.name,
          peakUtil: null,
          utilSum: 0,
          utilCount: 0,
          peakMemory: null,
        };
        if (gpu.utilizationPercent !== null) {
          running.peakUtil = maxOf(running.peakUtil, gpu.utilizationPercent);
          running.utilSum += gpu.utilizationPercent;
          running.utilCount += 1;
        }
        running.peakMemory = maxOf(running.peakMemory, gpu.memoryUsedBytes);
        if (gpu.memoryUsedBytes !== null) memory = (memory ?? 0) + gpu.memoryUsedBytes;
        perGpu.set(gpu.uuid, running);
      }
      peakMemory = maxOf(peakMemory, memory);
    },
    summary() {
      if (samples === 0) return undefined;
      const gpus = [...perGpu.values()].sort((a, b) => a.index - b.index);
      const utilSum = gpus.reduce((sum, g) => sum + g.utilSum, 0);
      const utilCount = gpus.reduce((sum, g) => sum + g.utilCount, 0);
      return {
        samples,
        peakUtilizationPercent: gpus.reduce<number | null>((peak, g) => maxOf(peak, g.peakUtil), null),
        meanUtilizationPercent: utilCount > 0 ? utilSum / utilCount : null,
        peakMemoryUsedBytes: peakMemory,
        perGpu: gpus.map((g) => ({
          index: g.index,
          uuid: g.uuid,
          name: g.name,
          peakUtilizationPercent: g.peakUtil,
          meanUtilizationPercent: g.utilCount > 0 ? g.utilSum / g.utilCount : null,
          peakMemoryUsedBytes: g.peakMemory,
        })),
      };
    },
  };
}
