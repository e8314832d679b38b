/**
 * @module harness/dashboard/page-views
 * What the dashboard's routes and live events answer, as the page reads them: the
 * overview, the live snapshot (`hello`, `tick`), the scale events and the log lines.
 * The routes and the live hub are typed with these, and the page (ui/*.js, `// @ts-check`
 * with JSDoc, tsconfig.ui.json) is checked against them: a field renamed here fails the
 * page's type check. The other answers' types are in views.ts, attempt-view.ts,
 * value-preview.ts and series.ts.
 */
import type { ScaleEvent } from '../launcher/scale-events.js';
import type { ChunkPreview } from './value-preview.js';
import type { SeriesPoint } from './series.js';
import type { EndpointRow, GpuView, JobDetail, WorkerRow } from './views.js';
import type { DepartedWorker } from './worker-history.js';

/** An overview panel (the launcher's, load balancing's): its plain JSON snapshot, or `{ error }` when the snapshot threw. */
export interface PanelView {
  id: string;
  title: string;
  data: unknown;
}

/** The state now: /ui/api/overview, and every `hello` and `tick` event. */
export interface LiveSnapshot {
  /** Epoch ms. */
  now: number;
  endpoints: EndpointRow[];
  workers: WorkerRow[];
  /** Workers that were connected and left, newest departure first (worker-history.ts). */
  departedWorkers: DepartedWorker[];
  gpu: GpuView;
  panels: PanelView[];
}

/** The chart history's shape: how often a point is taken and how long the history is. */
export interface SeriesSettings {
  sampleIntervalMs: number;
  historyMinutes: number;
}

/** `hello`: the state when the page connects (no chart history: the overview has it). */
export type HelloEvent = LiveSnapshot & SeriesSettings;

/** `tick`: the state each sample interval, with the new chart point. */
export type TickEvent = LiveSnapshot & { point: SeriesPoint };

/** GET /ui/api/overview. */
export interface OverviewView extends LiveSnapshot, SeriesSettings {
  /** Chart points, oldest first. */
  series: readonly SeriesPoint[];
  /** The submit form's request: the worker's test input, or `{ input: {} }`. */
  testInput: unknown;
  /** Whether testInput is the worker's own (else each endpoint's input schema gives the example). */
  testInputGiven: boolean;
  /** Per endpoint with an input schema: an example request made from it. */
  inputExamples: Record<string, { input: unknown }>;
  /** Whether the server asks for an API key (the page shows Log out). */
  authenticated: boolean;
  autoCreateEndpoints: boolean;
  /** Endpoints made on first use, with when (epoch ms). */
  createdOnUse: Array<{ id: string; at: number }>;
  version: string;
}

/** A scale event as /ui/api/scale-events answers it: a crash or an exit with its worker's last stderr lines. */
export type ScaleEventView = ScaleEvent & { stderr?: string[] };

/** GET /ui/api/scale-events. */
export interface ScaleEventsView {
  /** Whether the harness has a launcher (else there are never events). */
  launcher: boolean;
  /** Events recorded so far, all endpoints. */
  seq: number;
  events: ScaleEventView[];
}

/** One log line: a launched worker's (stdout, stderr, launcher), or an in-process worker's for a job (its level). */
export interface LogLineView {
  /** Epoch ms. */
  at: number;
  /** Capture sequence number (harness/launcher/log-order.ts): lines are ordered by (at, seq); of one process, it grows with each line captured. */
  seq: number;
  workerId: string;
  stream: string;
  line: string;
}

/** GET /ui/api/logs. */
export interface LogsView {
  launcher: boolean;
  inProcess: boolean;
  lines: LogLineView[];
  /** Of a job's lines: why some (or all) of them are no longer kept, in words; absent when none went. */
  dropped?: string;
  /** Of a job's lines: how many are no longer kept; absent when none went. */
  droppedLines?: number;
}

/** GET .../values/chunks: the unread chunks whole, from the index of the first. */
export interface ChunkValues {
  from: number;
  outputs: unknown[];
}

/** GET /ui/api/events: each Server-Sent Event's name and data (live-hub.ts). */
export interface LiveEvents {
  hello: HelloEvent;
  tick: TickEvent;
  /** The watched job, on connect and on each change the job page shows. */
  job: JobDetail;
  chunk: ChunkPreview;
  /** A burst too large to send: these chunks load on demand. */
  'chunks-skipped': { from: number; count: number };
  /** Chunks read by a /stream client before the page could see them. */
  'chunks-missed': { count: number };
  /** The job's chunks were taken back (a retry): the page drops those it has. */
  'chunks-reset': { jobId: string };
  'job-gone': { endpointId: string; jobId: string };
}

export type LiveEventName = keyof LiveEvents;
