/**
 * @module harness/dashboard/settings
 * Settings of the web dashboard at `/ui` (the `dashboard` option of
 * createHarnessServer). Only zod here: the server options import this file at start,
 * the dashboard's routes are imported when the server registers them.
 */
import * as z from 'zod';
import type { GpuReadResult } from 'serverless-worker/internal';
import type { JobLogBuffer } from './job-log-tap.js';

/**
 * What the dashboard needs of a GPU sampler (GpuSampler has it): the latest read, and
 * optionally start/stop, called when the first page opens and the last one closes
 * (so the GPU is polled for the dashboard only while someone looks).
 */
export interface DashboardGpuSource {
  latest(): GpuReadResult | undefined;
  start?(): void;
  stop?(): void;
  /**
   * Call `listener` after every read (GpuSampler has it): with it, the job page shows
   * the GPU summary of jobs run by in-process workers (gpu-job-log.ts).
   */
  onReading?(listener: (read: GpuReadResult) => void): () => void;
}

/**
 * A panel another part of the harness adds to the overview (the launcher, load
 * balancing): `snapshot()` is called once a second while a page is open, and its
 * plain JSON (or what its promise resolves to) is shown as a table under `title`.
 */
export interface DashboardPanel {
  readonly id: string;
  readonly title: string;
  snapshot(): unknown;
}

export const DashboardSettingsSchema = z.object({
  /** The job request the submit form starts with (a worker's test_input.json); default `{ "input": {} }`. */
  testInput: z.unknown().optional(),
  /** GPU readings shown on the workers view and the GPU charts; default none. */
  gpu: z
    .custom<DashboardGpuSource>((value) => typeof (value as { latest?: unknown } | null)?.latest === 'function', {
      error: 'must have latest() (a GpuSampler)',
    })
    .optional(),
  /**
   * Workers over HTTP that run on this machine, whose jobs the `gpu` source measures as
   * it does in-process workers' (the worker child of `--serve-api`), by endpoint and
   * worker id; default none.
   */
  localWorkers: z
    .custom<(endpointId: string, workerId: string) => boolean>((value) => typeof value === 'function', {
      error: 'must be a function (endpointId, workerId) => boolean',
    })
    .optional(),
  /** Extra overview panels (launcher, load balancing); default none. */
  panels: z
    .array(
      z.custom<DashboardPanel>(
        (value) => typeof (value as { snapshot?: unknown } | null)?.snapshot === 'function' && typeof (value as { id?: unknown }).id === 'string',
        { error: 'must be { id, title, snapshot() }' },
      ),
    )
    .default([]),
  /** Log lines of jobs run by an in-process worker (job-log-tap.ts), for the job page; default none. */
  jobLogs: z
    .custom<JobLogBuffer>((value) => typeof (value as { forJob?: unknown } | null)?.forJob === 'function', { error: 'must have forJob() (a JobLogBuffer)' })
    .optional(),
  /** Time between two live samples (counts, charts) while a page is open, ms; default 1000. */
  sampleIntervalMs: z.number().int().min(50).max(60_000).default(1_000),
  /** How much chart history is kept, minutes; default 10. */
  historyMinutes: z.number().int().min(1).max(120).default(10),
});

export type DashboardSettings = Readonly<z.output<typeof DashboardSettingsSchema>>;
