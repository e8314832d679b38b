/**
 * @module gpu/reading
 * The shape of one GPU reading and of a read attempt, as zod schemas: readings leave
 * the process (`serverless-worker gpu --json`, logs, metrics), so scripts can validate
 * them with the same schema the code is typed from.
 */
import * as z from 'zod';
import { systemClock } from '../clock/index.js';

/** Which vendor's tool produced a reading. */
export const GpuVendorSchema = z.enum(['nvidia', 'amd']);
export type GpuVendor = z.infer<typeof GpuVendorSchema>;

/** The command-line tool behind each vendor. */
export const GPU_TOOLS = { nvidia: 'nvidia-smi', amd: 'rocm-smi' } as const satisfies Record<GpuVendor, string>;
export type GpuTool = (typeof GPU_TOOLS)[GpuVendor];

/** A figure the tool may not report (`[N/A]`, `[Not Supported]`): null, never 0. */
const figure = z.number().finite().nullable();

export const GpuReadingSchema = z.object({
  vendor: GpuVendorSchema,
  /** The tool's own index (nvidia-smi: PCI bus order; rocm-smi: the N of `cardN`). */
  index: z.number().int().nonnegative(),
  /** nvidia-smi `GPU-...`; rocm-smi `Unique ID` (`0x...`), else `cardN` when the card has none. */
  uuid: z.string().min(1),
  name: z.string(),
  /** Percent of time a kernel ran (0-100); null on MIG-enabled GPUs and where unsupported. */
  utilizationPercent: figure,
  /** Percent of time device memory was read or written (0-100), not the share allocated. */
  memoryUtilizationPercent: figure,
  memoryUsedBytes: figure,
  memoryTotalBytes: figure,
  temperatureCelsius: figure,
  powerDrawWatts: figure,
  powerLimitWatts: figure,
  driverVersion: z.string().nullable(),
  /** MIG instances of this GPU named in CUDA_VISIBLE_DEVICES; absent when none were. */
  migInstances: z.array(z.string()).optional(),
});
export type GpuReading = z.infer<typeof GpuReadingSchema>;

/**
 * Why there are no readings. `not-installed`: the tool is not on PATH (the sampler then
 * stops calling it); `failed`: it exited non-zero or could not start; `timed-out`: it
 * hung past the timeout; `unparseable`: it printed nothing we could read; `no-devices`:
 * it ran and listed no GPU; `none-visible`: GPUs exist but CUDA_VISIBLE_DEVICES /
 * HIP_VISIBLE_DEVICES hides them all; `cancelled`: the caller aborted the read.
 */
export const NoGpuReasonSchema = z.enum(['not-installed', 'failed', 'timed-out', 'unparseable', 'no-devices', 'none-visible', 'cancelled']);
export type NoGpuReason = z.infer<typeof NoGpuReasonSchema>;

/** One tool's failed attempt, kept so that a combined "no GPU" says what each tool did. */
export const GpuToolAttemptSchema = z.object({
  vendor: GpuVendorSchema,
  tool: z.enum(['nvidia-smi', 'rocm-smi']),
  reason: NoGpuReasonSchema,
  message: z.string(),
});
export type GpuToolAttempt = z.infer<typeof GpuToolAttemptSchema>;

export const GpuReadingsSchema = z.object({
  ok: z.literal(true),
  vendor: GpuVendorSchema,
  tool: z.enum(['nvidia-smi', 'rocm-smi']),
  gpus: z.array(GpuReadingSchema).min(1),
  /** GPUs the tool listed that CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES hid. */
  hidden: z.number().int().nonnegative(),
  /** Epoch milliseconds when the tool answered. */
  readAt: z.number(),
});
export type GpuReadings = z.infer<typeof GpuReadingsSchema>;

export const NoGpuReadingsSchema = z.object({
  ok: z.literal(false),
  reason: NoGpuReasonSchema,
  /** One line a person can act on: what was run and what happened. */
  message: z.string(),
  attempts: z.array(GpuToolAttemptSchema),
  readAt: z.number(),
});
export type NoGpuReadings = z.infer<typeof NoGpuReadingsSchema>;

/** Either readings of at least one GPU, or the "no GPU readings" state with its reason. */
export const GpuReadResultSchema = z.discriminatedUnion('ok', [GpuReadingsSchema, NoGpuReadingsSchema]);
export type GpuReadResult = z.infer<typeof GpuReadResultSchema>;

/** A reader: never throws and never rejects; trouble comes back as `{ ok: false }`. */
export type GpuReader = (options?: { signal?: AbortSignal }) => Promise<GpuReadResult>;

/** What a parser made of a tool's output: the GPUs it could read, and what it skipped and why. */
export interface GpuParseResult {
  gpus: GpuReading[];
  skipped: Array<{ where: string; reason: string }>;
}

/** A "no GPU readings" result for one tool. */
export function noGpuFromAttempt(attempt: GpuToolAttempt, readAt = systemClock.now()): NoGpuReadings {
  return { ok: false, reason: attempt.reason, message: `${attempt.tool}: ${attempt.message}`, attempts: [attempt], readAt };
}

/** Shorten tool output quoted in a message; the heartbeat's reason is at most 256 chars. */
export function clip(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 3)}...` : oneLine;
}
