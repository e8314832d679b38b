/**
 * @module worker/init/init-types
 * The start-up phase as a worker author writes it: `serve(handler, { init })`. `init`
 * runs once, before the first job is taken (or, for a load-balancing worker, before
 * `/ping` answers 200); what it returns is every job's `ctx.state`.
 */
import type { Logger } from 'pino';

/** What `init` receives. */
export interface InitContext {
  /**
   * Aborted on SIGTERM/SIGINT during start-up (reason SW_WORKER_SHUTDOWN) and when
   * initTimeoutMs passes (reason SW_INIT_TIMEOUT). Pass it to fetch, waitForUrl and
   * child processes.
   */
  readonly signal: AbortSignal;
  /** Epoch ms at which initTimeoutMs aborts `signal`. */
  readonly deadline: number;
  /** A pino child logger (`phase: "init"`). */
  readonly log: Logger;
  /** This worker's id. */
  readonly workerId: string;
}

/**
 * The start-up function: load a model, start and wait for a local inference server.
 * Its value (sync or async) becomes `ctx.state` of every job. Throwing fails the start:
 * the worker takes no job and exits 1.
 */
export type InitFunction<State> = (ctx: InitContext) => State | Promise<State>;

/** Default bound of `init`, ms (10 minutes: a large model from a network volume). */
export const DEFAULT_INIT_TIMEOUT_MS = 600_000;

/** Health check name of a failed start-up in the unhealthy report (`check=init`). */
export const INIT_HEALTH_CHECK_NAME = 'init';
