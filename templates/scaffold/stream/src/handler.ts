/**
 * The worker: what a job's input looks like, what the handler does with it, and the
 * options of serve(). src/worker.ts starts it; test/handler.test.ts tests it.
 */
import type { Handler, ServeOptions } from 'serverless-worker';
import * as z from 'zod';

/** A job's input. Input that does not match fails the job (SW_INPUT_VALIDATION) before the handler runs. */
export const Input = z.object({
  prompt: z.string().min(1),
});
export type Input = z.infer<typeof Input>;

/** A stream: every `yield` becomes a chunk that /stream gives out while the job runs. */
export const handler: Handler<Input> = async function* (job, ctx) {
  for (const word of job.input.prompt.split(' ')) {
    // ctx.signal aborts on cancel, timeout and shutdown: stop producing.
    if (ctx.signal.aborted) return;
    yield `${word} `;
  }
};

/** The options of serve(handler, options); the tests run the handler with the same ones. */
export const options: ServeOptions<Input> = {
  inputSchema: Input,
  // The job's final output is the list of yielded values (false: only the stream has them).
  aggregateStream: true,
};
