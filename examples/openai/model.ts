/**
 * @module examples/openai/model
 * The "model" of the OpenAI example: it answers with the words of the prompt in
 * reverse order. Tiny and deterministic, so tests can check the exact answer.
 */

export const MODEL_ID = 'reverse-words-1';

/** The words of `text`. */
export function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word.length > 0);
}

/** The model's answer to `prompt`, as tokens (one word each, a space before all but the first). */
export function generate(prompt: string, maxTokens: number | undefined): string[] {
  const reversed = words(prompt).reverse();
  const kept = maxTokens === undefined ? reversed : reversed.slice(0, maxTokens);
  return kept.map((word, index) => (index === 0 ? word : ` ${word}`));
}

/** Why generation stopped: OpenAI's `length` when max_tokens cut it short. */
export function finishReason(prompt: string, maxTokens: number | undefined): 'stop' | 'length' {
  return maxTokens !== undefined && words(prompt).length > maxTokens ? 'length' : 'stop';
}
