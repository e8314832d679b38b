/**
 * @module transports/stop-listeners
 * The runtime's stop listeners of a transport (Transport.onStop): added and taken off, and
 * told of each stop in turn; a listener that throws is logged and the others still hear it.
 * The platform transport's job-stop poll and the supervised child's `stops` messages both
 * deliver through it.
 */
import type { Logger } from 'pino';
import type { StopReason } from '../job/index.js';
import type { StopListener } from './transport.js';

export class StopListeners {
  readonly #listeners = new Set<StopListener>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Listen; answers the function that takes the listener off. */
  add(listener: StopListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(jobId: string, reason: StopReason, attempt: number | undefined): void {
    for (const listener of this.#listeners) {
      try {
        listener(jobId, reason, attempt);
      } catch (error) {
        this.#logger.warn({ err: error, requestId: jobId }, 'stop listener failed');
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
