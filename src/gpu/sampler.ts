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
  return new PollingGpuSampler(reader, config.intervalMs, options.clock ?? systemClock);
}

type WindowAccumulator = ReturnType<typeof createWindowAccumulator>;

class PollingGpuSampler implements GpuSampler {
  readonly #reader: GpuReader;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #windows = new Set<WindowAccumulator>();
  readonly #listeners = new Set<(result: GpuReadResult) => void>();
  readonly #cancel = new AbortController();
  #started = false;
  #disabled = false;
  #closed = false;
  #looping = false;
  #timer: TimerHandle | undefined;
  #inFlight: Promise<GpuReadResult> | undefined;
  #last: GpuReadResult | undefined;

  constructor(reader: GpuReader, intervalMs: number, clock: Clock) {
    this.#reader = reader;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  start(): void {
    this.#started = true;
    this.#schedule(0);
  }

  stop(): void {
    this.#started = false;
    if (!this.#wanted()) this.#clearTimer();
  }

  latest(): GpuReadResult | undefined {
    return this.#last;
  }

  sample(): Promise<GpuReadResult> {
    if ((this.#disabled || this.#closed) && this.#last) return Promise.resolve(this.#last);
    this.#inFlight ??= this.#read();
    return this.#inFlight;
  }

  beginWindow(): GpuWindow {
    if (this.#disabled || this.#closed) return { end: () => undefined };
    const window = createWindowAccumulator();
    this.#windows.add(window);
    this.#schedule(0);
    let summary: GpuWindowSummary | undefined;
    let open = true;
    return {
      end: () => {
        if (open) {
          open = false;
          this.#windows.delete(window);
          if (!this.#wanted()) this.#clearTimer();
          summary = window.summary();
        }
        return summary;
      },
    };
  }

  onReading(listener: (result: GpuReadResult) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get state(): GpuSamplerState {
    if (this.#closed) return 'closed';
    if (this.#disabled) return 'disabled';
    return this.#timer || this.#looping ? 'polling' : 'idle';
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clearTimer();
    this.#windows.clear();
    this.#cancel.abort();
    if (this.#inFlight) await this.#inFlight;
  }

  #wanted(): boolean {
    return !this.#closed && !this.#disabled && (this.#started || this.#windows.size > 0);
  }

  #clearTimer(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  async #read(): Promise<GpuReadResult> {
    // One turn first: sample() has set #inFlight before the reader runs, so that a reader
    // that throws at once cannot clear it before it is set (and leave it set for good).
    await Promise.resolve();
    let result: GpuReadResult;
    try {
      result = await this.#reader({ signal: this.#cancel.signal });
    } catch (error) {
      // A custom reader broke its promise never to throw; keep the sampler alive.
      const message = `GPU reader threw: ${error instanceof Error ? error.message : String(error)}`;
      result = { ok: false, reason: 'failed', message, attempts: [], readAt: this.#clock.now() };
    }
    // Cleared before listeners and awaiters run, so that a sample() they call reads anew.
    this.#inFlight = undefined;
    this.#record(result);
    return result;
  }

  #record(result: GpuReadResult): void {
    this.#last = result;
    if (result.ok) for (const window of this.#windows) window.add(result.gpus);
    // Every tool tried is absent: it will not appear while we run.
    if (!result.ok && result.reason === 'not-installed') {
      this.#disabled = true;
      this.#clearTimer();
    }
    for (const listener of this.#listeners) {
      try {
        listener(result);
      } catch {
        // A listener's bug must not stop the sampling of everyone else.
      }
    }
  }

  async #loop(): Promise<void> {
    this.#timer = undefined;
    if (!this.#wanted()) return;
    this.#looping = true;
    try {
      await this.sample();
    } finally {
      this.#looping = false;
    }
    this.#schedule(this.#intervalMs);
  }

  #schedule(delayMs: number): void {
    if (this.#timer || this.#looping || !this.#wanted()) return;
    // Sampling alone must never keep a process alive (an unref'd timer).
    this.#timer = this.#clock.setTimer(delayMs, () => void this.#loop());
  }
}
