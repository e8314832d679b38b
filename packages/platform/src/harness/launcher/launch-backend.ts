/**
 * @module harness/launcher/launch-backend
 * How a launched worker runs: as a local process (process-backend.ts, `--image
 * NAME=COMMAND`) or as a container of the template's image (docker/docker-backend.ts,
 * `--launcher docker`). The launcher decides when workers start and stop, with which
 * variables and GPUs; a backend only runs one, reads its output and passes signals on.
 */
import type { Endpoint, Template } from '../management/index.js';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** It never ran: why (the engine refused the container, say); shown in the endpoint's unhealthy reason. */
  startError?: string;
}

/** One running worker as its backend runs it. */
export interface WorkerRunner {
  /** How the launcher's lines name it: `pid 1234`, `container serverless-worker-ep-1-3f2a`. */
  readonly label: string;
  /** Whether it may still be running: false once it was seen to exit (its output or removal may still be under way). */
  readonly running: boolean;
  /** Pass a signal on (to the process group, or the container's main process); ignored once it exited. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** Resolves once it has exited and its output is read to the end (and, for a container, it is removed). */
  readonly exited: Promise<WorkerExit>;
}

export interface WorkerStart {
  id: string;
  endpoint: Endpoint;
  template: Template;
  /** The worker's variables (launch-env.ts), without the harness's own environment. */
  env: Record<string, string | undefined>;
  gpus: readonly string[];
  gpuVendor: 'nvidia' | 'amd' | undefined;
  /** After SIGTERM, how long until SIGKILL, ms (a container records it as its stop timeout). */
  shutdownDeadlineMs: number;
  /** How long the harness lets a worker stay silent, ms: a container exits once its harness is unreachable this long (SW_HARNESS_GONE_AFTER_MS). */
  harnessSilenceMs: number;
  onLine(stream: 'stdout' | 'stderr', line: string): void;
}

export interface LaunchBackend {
  readonly kind: 'process' | 'docker';
  /** Whether this backend runs the workers of templates with this image. */
  runs(template: Template): boolean;
  /** What of the template and endpoint changes how a worker runs here (part of the launch key: a change rolls the workers). */
  runKey(endpoint: Endpoint, template: Template): unknown;
  /** Why no worker of the template can start now (its image missing, the engine unreachable), or undefined. */
  startProblem(template: Template): Promise<string | undefined>;
  start(start: WorkerStart): WorkerRunner;
  /** Release what the backend holds (connections, containers left over); workers are stopped by the launcher first. */
  close(): Promise<void>;
}
