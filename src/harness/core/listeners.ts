/**
 * @module harness/core/listeners
 * A minimal typed listener set. A listener that throws is logged by the caller's
 * `onError` and never stops the others, so one bad subscriber cannot stall the queue.
 */
export class Listeners<Args extends unknown[]> {
  readonly #set = new Set<(...args: Args) => void>();

  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  add(listener: (...args: Args) => void): () => void {
    this.#set.add(listener);
    return () => this.#set.delete(listener);
  }

  emit(...args: Args): void {
    for (const listener of this.#set) {
      try {
        listener(...args);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  get size(): number {
    return this.#set.size;
  }
}
