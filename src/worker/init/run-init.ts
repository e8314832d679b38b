/**
 * @module worker/init/run-init
 * Run the author's `init` once, bounded. Each way it can end is its own promise and
 * they race (as a job run does): `init` settling, its timeout, or an outside abort
 * (SIGTERM during start-up). On a timeout the answer comes at once: the worker is about
 * to exit 1 and need not wait for init to notice. On an abort, init gets `graceMs` to
 * stop, so that a clean SIGTERM leaves no half-written files behind.
 */
import type { Logger } from 'pino';
import { systemClock, withinTime, type Clock, type TimerHandle } from '../../clock/index.js';
import { ServerlessWorkerError, isServerlessWorkerError } from '../../job/index.js';
import type { InitFunction } from './init-types.js';

export interface RunInitOptions {
  /** Bound of init, ms. */
  readonly timeoutMs: number;
  /** Logger; init gets a child of it. */
  readonly logger: Logger;
  readonly workerId: string;
  /** Aborting it stops init (SIGTERM during start-up); default none. */
  readonly signal?: AbortSignal;
  /** After an outside abort, how long init may take to stop, ms; default 5 000. */
  readonly graceMs?: number;
  /** Times the bound, the grace and the duration; default the system clock. */
  readonly clock?: Clock;
}

/** How init ended. */
export type InitOutcome<State> =
  | { readonly ok: true; readonly state: State; readonly durationMs: number }
  | {
      readonly ok: false;
      /** `failed`: init threw; `timed_out`: initTimeoutMs passed; `aborted`: a signal arrived during start-up. */
      readonly end: 'failed' | 'timed_out' | 'aborted';
      /** SW_INIT_FAILED (the thrown error as cause), SW_INIT_TIMEOUT or SW_WORKER_SHUTDOWN. */
      readonly error: ServerlessWorkerError;
      readonly durationMs: number;
    };

const GRACE_EXPIRED = Symbol('grace-expired');

/** The text of a thrown value, for the failure reason. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : String(error);
}

/** Run `init` once; never rejects. */
export async function runInit<State>(init: InitFunction<State>, options: RunInitOptions): Promise<InitOutcome<State>> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const elapsed = (): number => clock.now() - startedAt;
  const controller = new AbortController();
  const deadline = startedAt + options.timeoutMs;
  const log = options.logger.child({ phase: 'init' });
  let timer: TimerHandle | undefined;
  const timedOut = new Promise<'timed_out'>((resolve) => {
    timer = clock.setTimer(options.timeoutMs, () => resolve('timed_out'), { keepAlive: true });
  });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (options.signal?.aborted) resolve('aborted');
    onAbort = () => resolve('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
  // Sync throws become rejections; a value becomes a fulfilled promise.
  const work = Promise.resolve().then(() => init({ signal: controller.signal, deadline, log, workerId: options.workerId }));
  const settled = work.then(
    (state) => ({ kind: 'ok' as const, state }),
    (error: unknown) => ({ kind: 'error' as const, error }),
  );
  try {
    const first = await Promise.race([settled, timedOut, aborted]);
    if (first === 'timed_out') {
      const error = new ServerlessWorkerError('SW_INIT_TIMEOUT', `init did not finish within initTimeoutMs (${options.timeoutMs} ms)`, {
        initTimeoutMs: options.timeoutMs,
      });
      controller.abort(error);
      return { ok: false, end: 'timed_out', error, durationMs: elapsed() };
    }
    if (first === 'aborted') {
      const error = new ServerlessWorkerError('SW_WORKER_SHUTDOWN', 'the worker was stopped (SIGTERM/SIGINT) while init was running');
      controller.abort(error);
      const stopped = await withinTime(settled, options.graceMs ?? 5_000, GRACE_EXPIRED, clock, false);
      if (stopped === GRACE_EXPIRED) log.warn({ graceMs: options.graceMs ?? 5_000 }, 'init ignored its abort signal');
      return { ok: false, end: 'aborted', error, durationMs: elapsed() };
    }
    if (first.kind === 'ok') return { ok: true, state: first.state, durationMs: elapsed() };
    const cause = first.error;
    // init passed on our own abort reason (it awaited something that rejected with ctx.signal.reason).
    if (isServerlessWorkerError(cause) && cause.code === 'SW_INIT_TIMEOUT') return { ok: false, end: 'timed_out', error: cause, durationMs: elapsed() };
    const error = new ServerlessWorkerError('SW_INIT_FAILED', `init failed: ${describeError(cause)}`, undefined, { cause });
    return { ok: false, end: 'failed', error, durationMs: elapsed() };
  } finally {
    timer?.cancel();
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  }
}
