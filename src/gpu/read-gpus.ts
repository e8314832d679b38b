/**
 * @module gpu/read-gpus
 * Reading whichever GPUs the machine has: NVIDIA first, then AMD. A reader made by
 * createGpuReader remembers which tools are not installed and never runs them again,
 * so polling on a CPU-only machine costs nothing after the first try.
 */
import { systemClock } from '../clock/index.js';
import { readAmdGpus } from './read-amd.js';
import { readNvidiaGpus } from './read-nvidia.js';
import { GPU_TOOLS } from './reading.js';
import type { GpuReader, GpuReadResult, GpuToolAttempt, GpuVendor, NoGpuReadings } from './reading.js';
import type { RunToolOptions } from './run-tool.js';

export interface ReadGpusOptions extends RunToolOptions {
  /** Vendors to try, in order; default `['nvidia', 'amd']`. */
  vendors?: readonly GpuVendor[];
}

const READERS: Record<GpuVendor, (options: RunToolOptions) => Promise<GpuReadResult>> = {
  nvidia: readNvidiaGpus,
  amd: readAmdGpus,
};

/**
 * A "no GPU readings" result from every tool's attempt. Its reason is the first one that
 * is not `not-installed` (a failing nvidia-smi says more than an absent rocm-smi).
 */
export function combineAttempts(attempts: readonly GpuToolAttempt[], readAt = systemClock.now()): NoGpuReadings {
  const telling = attempts.find((a) => a.reason !== 'not-installed') ?? attempts[0];
  return {
    ok: false,
    reason: telling?.reason ?? 'not-installed',
    message: attempts.length > 0 ? attempts.map((a) => `${a.tool}: ${a.message}`).join('; ') : 'no GPU tool was tried',
    attempts: [...attempts],
    readAt,
  };
}

async function readInOrder(
  vendors: readonly GpuVendor[],
  options: RunToolOptions,
  skip: (vendor: GpuVendor) => GpuToolAttempt | undefined,
  onAttempt: (attempt: GpuToolAttempt) => void,
): Promise<GpuReadResult> {
  const attempts: GpuToolAttempt[] = [];
  for (const vendor of vendors) {
    const known = skip(vendor);
    if (known) {
      attempts.push(known);
      continue;
    }
    if (options.signal?.aborted) break;
    const result = await READERS[vendor](options);
    if (result.ok) return result;
    for (const a of result.attempts) {
      attempts.push(a);
      onAttempt(a);
    }
  }
  if (options.signal?.aborted && !attempts.some((a) => a.reason === 'cancelled')) {
    attempts.push({ vendor: vendors[0] ?? 'nvidia', tool: GPU_TOOLS[vendors[0] ?? 'nvidia'], reason: 'cancelled', message: 'the read was cancelled' });
  }
  return combineAttempts(attempts);
}

/**
 * Read the GPUs once: nvidia-smi, and rocm-smi when nvidia-smi gives no readings.
 * Never throws. Options: vendors (default nvidia then amd), timeoutMs (default 3000 per
 * tool), env (default process.env, PATH and the visible-devices variables), signal.
 */
export function readGpus(options: ReadGpusOptions = {}): Promise<GpuReadResult> {
  return readInOrder(
    options.vendors ?? ['nvidia', 'amd'],
    options,
    () => undefined,
    () => undefined,
  );
}

/**
 * A GpuReader for repeated reads (the sampler's default): like readGpus, but a tool
 * found missing (ENOENT) is not run again by this reader.
 */
export function createGpuReader(options: ReadGpusOptions = {}): GpuReader {
  const vendors = options.vendors ?? ['nvidia', 'amd'];
  const missing = new Map<GpuVendor, GpuToolAttempt>();
  return (call = {}) =>
    readInOrder(
      vendors,
      { ...options, ...(call.signal ? { signal: call.signal } : {}) },
      (vendor) => missing.get(vendor),
      (attempt) => {
        if (attempt.reason === 'not-installed') missing.set(attempt.vendor, attempt);
      },
    );
}
