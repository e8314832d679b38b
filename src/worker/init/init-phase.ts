/**
 * @module worker/init/init-phase
 * The start-up phase as every mode runs it (platform, dry run, --serve-api,
 * load-balancing): `init` bounded by initTimeoutMs, SIGTERM/SIGINT during it abort it,
 * one log line with the duration or the failure reason, the init-duration metric, and
 * on failure one unhealthy report (`check=init`) through the caller's `report`.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { Handler } from '../handler.js';
import type { WorkerConfig } from '../options.js';
import { onShutdownSignals } from '../signals.js';
import { bindState } from './bind-state.js';
import { INIT_HEALTH_CHECK_NAME, type InitFunction } from './init-types.js';
import { runInit, type InitOutcome } from './run-init.js';

export interface InitPhaseOptions<State> {
  /** The author's init; undefined: nothing to run (state undefined, no log line). */
  readonly init: InitFunction<State> | undefined;
  readonly timeoutMs: number;
  /** Times init's bound and grace; default the system clock. */
  readonly clock?: Clock;
  /** After SIGTERM during init, how long init may take to stop, ms. */
  readonly graceMs: number;
  readonly logger: Logger;
  readonly workerId: string;
  /** The init-duration gauge is set here when given. */
  readonly metrics?: Metrics;
  /** Listen to SIGTERM/SIGINT while init runs (and only then); default true. */
  readonly signals?: boolean;
  /** Aborts init from outside (tests, an embedding program); default none. */
  readonly signal?: AbortSignal;
  /** Report a failed or timed-out init once (platform: the unhealthy ping). Never called for an abort. */
  readonly report?: (check: string, reason: string) => Promise<void>;
  /**
   * Put init's own error (with its stack) on the failure's log line; default true. The
   * local modes pass false and print the failure as a start-up error instead (the stack
   * only with --verbose or a debug level), where the log line would repeat it.
   */
  readonly errorInLog?: boolean;
}

/** The process exit code after a failed start-up: 0 when a signal stopped it (a clean stop), 1 otherwise. */
export function initExitCode(outcome: InitOutcome<unknown>): number {
  return outcome.ok || outcome.end === 'aborted' ? 0 : 1;
}

/** Run the start-up phase; never rejects. */
export async function runInitPhase<State>(options: InitPhaseOptions<State>): Promise<InitOutcome<State | undefined>> {
  const { init, logger, metrics } = options;
  if (init === undefined) return { ok: true, state: undefined, durationMs: 0 };
  const stop = new AbortController();
  const outside = options.signal;
  const onOutside = (): void => stop.abort(outside?.reason);
  outside?.addEventListener('abort', onOutside, { once: true });
  if (outside?.aborted) stop.abort(outside.reason);
  const offSignals = options.signals === false ? () => {} : onShutdownSignals(logger, () => stop.abort());
  logger.info({ initTimeoutMs: options.timeoutMs }, 'init: start-up phase running; no job is taken until it ends');
  let outcome: InitOutcome<State>;
  try {
    outcome = await runInit(init, {
      timeoutMs: options.timeoutMs,
      graceMs: options.graceMs,
      logger,
      workerId: options.workerId,
      signal: stop.signal,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } finally {
    offSignals();
    outside?.removeEventListener('abort', onOutside);
  }
  const seconds = outcome.durationMs / 1_000;
  const durationMs = Math.round(outcome.durationMs);
  if (outcome.ok) {
    metrics?.initDurationSeconds.set({ outcome: 'ok' }, seconds);
    logger.info({ durationMs }, `init finished in ${durationMs} ms`);
    return outcome;
  }
  metrics?.initDurationSeconds.set({ outcome: outcome.end }, seconds);
  if (outcome.end === 'aborted') {
    logger.info({ durationMs }, `init stopped by a shutdown signal after ${durationMs} ms`);
    return outcome;
  }
  const reason = outcome.error.message;
  // init's own error where there is one (its stack names the author's lines; the wrapper's
  // message already holds its text, which pino's cause handling would append twice).
  const err = outcome.error.cause ?? outcome.error;
  const fields = { code: outcome.error.code, durationMs, reason, check: INIT_HEALTH_CHECK_NAME };
  if (options.errorInLog === false) {
    logger.error(fields, `start-up failed: ${reason}`);
    logger.debug({ err }, 'start-up failure: init error');
  } else logger.error({ err, ...fields }, `start-up failed: ${reason}`);
  await options.report?.(INIT_HEALTH_CHECK_NAME, reason).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not report the failed init');
  });
  return outcome;
}

/** The handler once the start-up phase succeeded, or the exit code when it did not. */
export type StartedHandler =
  | { readonly ok: true; readonly handler: Handler<unknown>; readonly durationMs: number }
  | { readonly ok: false; readonly exitCode: number; readonly outcome: InitOutcome<unknown> };

/**
 * Run `config.init` (if any) as the start-up phase and bind its value to `handler` as
 * `ctx.state`; on failure answer the exit code (1; 0 after a shutdown signal).
 */
export async function startHandler(
  handler: Handler<unknown, unknown>,
  config: Pick<WorkerConfig, 'init' | 'initTimeoutMs' | 'timeoutGraceMs'>,
  logger: Logger,
  options: Pick<InitPhaseOptions<unknown>, 'workerId' | 'metrics' | 'report' | 'signals' | 'signal' | 'errorInLog' | 'clock'>,
): Promise<StartedHandler> {
  if (config.init === undefined) return { ok: true, handler: handler as Handler<unknown>, durationMs: 0 };
  const outcome = await runInitPhase({ init: config.init, timeoutMs: config.initTimeoutMs, graceMs: config.timeoutGraceMs, logger, ...options });
  if (!outcome.ok) return { ok: false, exitCode: initExitCode(outcome), outcome };
  return { ok: true, handler: bindState(handler, outcome.state), durationMs: outcome.durationMs };
}
