/**
 * @module gpu/sampler
 * Polls the GPUs while jobs run and folds the readings into per-job windows. It polls
 * only while started or while a window is open, one read at a time (a slow tool delays
 * the next read instead of piling up processes), and for good once the tools are found
 * missing: on a CPU-only machine it costs one failed spawn per tool, then nothing.
 */
import * as z from 'zod';
import { systemClock, type Clock, type TimerHandle } from '../clock/index.js';
import { parseOrThrow } from '../job/parse.js';
import { createGpuReader } from './read-gpus.js';
import type { GpuReader, GpuReadResult } from './reading.js';
import { DEFAULT_GPU_TOOL_TIMEOUT_MS } from './run-tool.js';
import { createWindowAccumulator, type GpuWindowSummary } from './window-summary.js';

/** Default time between two reads while polling, in ms. */
export const DEFAULT_GPU_SAMPLE_INTERVAL_MS = 5000;

const SamplerOptionsSchema = z.object({
  intervalMs: z.number().int().min(10).max(3_600_000).default(DEFAULT_GPU_SAMPLE_INTERVAL_MS),
  timeoutMs: z.number().int().min(1).max(600_000).default(DEFAULT_GPU_TOOL_TIMEOUT_MS),
  reader: z.custom<GpuReader>((v) => typeof v === 'function', { message: 'reader must be a function' }).optional(),
  // process.env is an exotic object that z.record refuses; any object of strings will do.
  env: z.custom<NodeJS.ProcessEnv>((value) => typeof value === 'object' && value !== null, { error: 'must be an environment object' }).optional(),
});

export interface GpuSamplerOptions {
  /** Time between reads while polling; default 5000 ms. */
  intervalMs?: number;
  /** Timeout of one tool run, for the default reader; default 3000 ms. */
  timeoutMs?: number;
  /** Where readings come from; default createGpuReader({ timeoutMs, env }) (nvidia-smi, then rocm-smi). */
  reader?: GpuReader;
  /** Environment for the default reader (PATH, CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Times the reads and dates a failed one; default the system clock. */
  clock?: Clock;
}

/** A job's window over the readings. */
export interface GpuWindow {
  /** Close the window: its summary, or undefined when no reading was taken while it was open. Idempotent. */
  end(): GpuWindowSummary | undefined;
}

/** `idle`: not polling; `polling`; `disabled`: no GPU tool is installed, never polls again; `closed`. */
export type GpuSamplerState = 'idle' | 'polling' | 'disabled' | 'closed';

export interface GpuSampler {
  /** Poll even with no window open (for metrics). */
  start(): void;
  /** Stop the polling that start() asked for; open windows keep it going. */
  stop(): void;
  /** The latest read, or undefined before the first one has finished. */
  latest(): GpuReadResult | undefined;
  /** Read now (joining a read already under way). After `disabled`, the last result without a read. */
  sample(): Promise<GpuReadResult>;
  /** Open a window, e.g. when a job starts; reads at once if the sampler was idle. */
  beginWindow(): GpuWindow;
  /** Call `listener` after every read; returns the unsubscribe function. */
  onReading(listener: (result: GpuReadResult) => void): () => void;
  readonly state: GpuSamplerState;
  /** Stop for good, cancel a read under way (the tool is killed), and wait for it. */
  close(): Promise<void>;
}

/** A sampler; validates options (SW_INVALID_OPTIONS). Defaults: intervalMs 5000, timeoutMs 3000. */
export function createGpuSampler(options: GpuSamplerOptions = {}): GpuSampler {
  const config = parseOrThrow(SamplerOptionsSchema, options, 'SW_INVALID_OPTIONS', 'GPU sampler options');
  const reader = config.reader ?? createGpuReader({ timeoutMs: config.timeoutMs, ...(options.env ? { env: options.env } : {}) });
  const windows = new Set<ReturnType<typeof createWindowAccumulator>>();
  const listeners = new Set<(result: GpuReadResult) => void>();
  const cancel = new AbortController();
  const clock = options.clock ?? systemClock;
  let started = false;
  let disabled = false;
  let closed = false;
  let looping = false;
  let timer: TimerHandle | undefined;
  let inFlight: Promise<GpuReadResult> | undefined;
  let last: GpuReadResult | undefined;

  const wanted = (): boolean => !closed && !disabled && (started || windows.size > 0);

  const clearTimer = (): void => {
    timer?.cancel();
    timer = undefined;
  };

  const record = (result: GpuReadResult): void => {
    last = result;
    if (result.ok) for (const window of windows) window.add(result.gpus);
    // Every tool tried is absent: it will not appear while we run.
    if (!result.ok && result.reason === 'not-installed') {
      disabled = true;
      clearTimer();
    }
    for (const listener of listeners) {
      try {
        listener(result);
      } catch {
        // A listener's bug must not stop the sampling of everyone else.
      }
    }
  };

  const sample = (): Promise<GpuReadResult> => {
    if ((disabled || closed) && last) return Promise.resolve(last);
    if (inFlight) return inFlight;
    const read = (async (): Promise<GpuReadResult> => {
      let result: GpuReadResult;
      try {
        result = await reader({ signal: cancel.signal });
      } catch (error) {
        // A custom reader broke its promise never to throw; keep the sampler alive.
        const message = `GPU reader threw: ${error instanceof Error ? error.message : String(error)}`;
        result = { ok: false, reason: 'failed', message, attempts: [], readAt: clock.now() };
      }
      // Cleared before listeners and awaiters run, so that a sample() they call reads anew.
      inFlight = undefined;
      record(result);
      return result;
    })();
    inFlight = read;
    return read;
  };

  const loop = async (): Promise<void> => {
    timer = undefined;
    if (!wanted()) return;
    looping = true;
    try {
      await sample();
    } finally {
      looping = false;
    }
    schedule(config.intervalMs);
  };

  function schedule(delayMs: number): void {
    if (timer || looping || !wanted()) return;
    // Sampling alone must never keep a process alive (an unref'd timer).
    timer = clock.setTimer(delayMs, () => void loop());
  }

  return {
    start() {
      started = true;
      schedule(0);
    },
    stop() {
      started = false;
      if (!wanted()) clearTimer();
    },
    latest: () => last,
    sample,
    beginWindow() {
      if (disabled || closed) return { end: () => undefined };
      const window = createWindowAccumulator();
      windows.add(window);
      schedule(0);
      let summary: GpuWindowSummary | undefined;
      let open = true;
      return {
        end() {
          if (open) {
            open = false;
            windows.delete(window);
            if (!wanted()) clearTimer();
            summary = window.summary();
          }
          return summary;
        },
      };
    },
    onReading(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get state(): GpuSamplerState {
      if (closed) return 'closed';
      if (disabled) return 'disabled';
      return timer || looping ? 'polling' : 'idle';
    },
    async close() {
      closed = true;
      clearTimer();
      windows.clear();
      cancel.abort();
      if (inFlight) await inFlight;
    },
  };
}
