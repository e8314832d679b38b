/**
 * @module transports/platform/key-refused
 * A worker whose RUNPOD_AI_API_KEY the worker API refuses (401 or 403) can do nothing
 * until the key is fixed; logging a warning per poll would bury the one line that
 * says so. This reporter logs that line once per run of refusals, naming the
 * variable to set, and the rest at debug level; the take loop meanwhile retries at
 * its slowest rate (pollBackoffMaxMs), so a key fixed by a restart of the harness or
 * a platform rollout is picked up without a restart of the worker.
 */
import type { Logger } from 'pino';

/** The statuses that mean "this key is not accepted". */
export function isKeyRefused(status: number): boolean {
  return status === 401 || status === 403;
}

/** The message logged once: what happened and which variable to set. */
export function keyRefusedMessage(status: number, keySet: boolean): string {
  return (
    `the worker API refused the key (HTTP ${status}): set RUNPOD_AI_API_KEY to the key the platform or harness expects ` +
    (keySet ? '(the key set now is wrong)' : '(it is not set)') +
    '; retrying at a low rate'
  );
}

export class KeyRefusedReporter {
  readonly #logger: Logger;
  readonly #keySet: boolean;
  #reported = false;

  constructor(logger: Logger, keySet: boolean) {
    this.#logger = logger;
    this.#keySet = keySet;
  }

  /** True while the last answer was a refusal. */
  get refused(): boolean {
    return this.#reported;
  }

  /** A refusal from `source` (job-take, heartbeat, ...): logged as an error the first time, at debug level after. */
  refusedBy(source: string, status: number): void {
    if (this.#reported) {
      this.#logger.debug({ source, status }, 'worker API still refuses the key');
      return;
    }
    this.#reported = true;
    this.#logger.error({ source, status, variable: 'RUNPOD_AI_API_KEY' }, keyRefusedMessage(status, this.#keySet));
  }

  /** A request was accepted again: a later refusal is reported again. */
  accepted(): void {
    if (this.#reported) this.#logger.info('worker API accepts the key again');
    this.#reported = false;
  }
}
