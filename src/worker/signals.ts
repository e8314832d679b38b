/**
 * @module worker/signals
 * SIGTERM and SIGINT start a graceful shutdown; a second signal exits at once (after
 * `beforeExit`, when given: what must not outlive the process, bounded by
 * BEFORE_EXIT_BOUND_MS; a third signal meanwhile exits without waiting).
 */
import type { Logger } from 'pino';
import { systemClock } from '../clock/index.js';

/** How long a second signal waits for `beforeExit` before the process exits anyway, ms. */
export const BEFORE_EXIT_BOUND_MS = 5_000;

export function onShutdownSignals(
  logger: Logger,
  shutdown: (signal: NodeJS.Signals) => void,
  beforeExit?: (signal: NodeJS.Signals) => Promise<void>,
): () => void {
  let received = false;
  let exiting = false;
  const handle = (signal: NodeJS.Signals): void => {
    const code = signal === 'SIGINT' ? 130 : 143;
    if (received && (exiting || beforeExit === undefined)) {
      logger.warn({ signal }, `${exiting ? 'third' : 'second'} signal: exiting now`);
      process.exit(code);
    }
    if (received && beforeExit !== undefined) {
      exiting = true;
      logger.warn({ signal, boundMs: BEFORE_EXIT_BOUND_MS }, 'second signal: killing what must not outlive this process, then exiting');
      const exit = (): void => {
        logger.flush();
        process.exit(code);
      };
      systemClock.setTimer(BEFORE_EXIT_BOUND_MS, exit);
      void beforeExit(signal)
        .catch((error: unknown) => logger.error({ err: error }, 'could not stop everything before exiting'))
        .finally(exit);
      return;
    }
    received = true;
    logger.info({ signal }, 'shutdown signal received: draining');
    shutdown(signal);
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  return () => {
    process.off('SIGTERM', handle);
    process.off('SIGINT', handle);
  };
}
