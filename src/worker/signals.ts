/**
 * @module worker/signals
 * SIGTERM and SIGINT start a graceful shutdown; a second signal exits at once.
 */
import type { Logger } from 'pino';

export function onShutdownSignals(logger: Logger, shutdown: (signal: NodeJS.Signals) => void): () => void {
  let received = false;
  const handle = (signal: NodeJS.Signals): void => {
    if (received) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(signal === 'SIGINT' ? 130 : 143);
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
