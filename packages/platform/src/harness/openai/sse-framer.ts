/**
 * @module harness/openai/sse-framer
 * Turns a job's stream chunk outputs into `text/event-stream` text for OpenAI clients.
 * - A string that starts with an SSE field (`data:`, `event:`, `id:`, `retry:`) is SSE
 *   text the worker framed itself (vLLM and SGLang workers do): it passes through
 *   unchanged, and so does every later string of the job (a long line the chunker
 *   split over two chunks must not be framed twice).
 * - Anything else (an OpenAI chunk object, or a plain string before any SSE text) is
 *   one event: `data: <json>` and a blank line.
 * - An array is a batch: each element is handled as above.
 * Before its own events the framer makes sure the previous text ended its event, so a
 * worker's last line without a blank line cannot merge with `data: [DONE]`.
 */

const SSE_FIELD = /^\s*(?:data|event|id|retry):/;
const DONE_LINE = /^data:\s*\[DONE\]\s*$/m;

export class SseFramer {
  #passThrough = false;
  #sawDone = false;
  /** The last two characters written, to know whether an event is still open. */
  #tail = '\n\n';

  /** The SSE text for one chunk's output ('' for nothing). */
  frame(output: unknown): string {
    if (Array.isArray(output)) return output.map((item) => this.frame(item)).join('');
    if (output === undefined) return '';
    if (typeof output === 'string' && (this.#passThrough || SSE_FIELD.test(output))) {
      this.#passThrough = true;
      if (DONE_LINE.test(output)) this.#sawDone = true;
      return this.#emit(output);
    }
    return this.event(JSON.stringify(output));
  }

  /** One `data:` event of our own (a JSON text, or `[DONE]`), closing any open event first. */
  event(data: string): string {
    return this.#emit(`${this.#separator()}data: ${data}\n\n`);
  }

  /** The closing `data: [DONE]`, unless the worker already sent one ('' then). */
  done(): string {
    if (this.#sawDone) return '';
    this.#sawDone = true;
    return this.event('[DONE]');
  }

  /** Whether a `data: [DONE]` line has been written. */
  get sawDone(): boolean {
    return this.#sawDone;
  }

  #separator(): string {
    if (this.#tail.endsWith('\n\n')) return '';
    return this.#tail.endsWith('\n') ? '\n' : '\n\n';
  }

  #emit(text: string): string {
    if (text.length > 0) this.#tail = (this.#tail + text).slice(-2);
    return text;
  }
}
