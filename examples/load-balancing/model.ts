/**
 * @module examples/load-balancing/model
 * The example's "model", loaded once in init: it answers with the words of the last
 * user message in upper case, one token a word. Tiny and deterministic, so tests can
 * check the exact answer; `loadModel` takes MODEL_LOAD_MS (default 500) as a real
 * model's start-up would, and honours the abort signal.
 */

export const MODEL_ID = 'upper-words-1';

export interface Model {
  readonly id: string;
  readonly loadedInMs: number;
  /** The answer to `prompt`, as tokens (a space before all but the first). */
  generate(prompt: string): string[];
}

/** "Load" the model: wait `ms` (or until `signal` aborts: rejects with its reason). */
export async function loadModel(ms: number, signal: AbortSignal): Promise<Model> {
  const startedAt = Date.now();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
  return {
    id: MODEL_ID,
    loadedInMs: Date.now() - startedAt,
    generate: (prompt) =>
      prompt
        .split(/\s+/)
        .filter((word) => word.length > 0)
        .map((word, index) => (index === 0 ? word.toUpperCase() : ` ${word.toUpperCase()}`)),
  };
}
