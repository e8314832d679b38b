/**
 * The worker: what a job's input looks like, what the handler does with it, and the
 * options of serve(). src/worker.ts starts it; test/handler.test.ts tests it.
 */
import type { Handler, ServeOptions } from 'serverless-worker';
import * as z from 'zod';

/** A job's input. Input that does not match fails the job (SW_INPUT_VALIDATION) before the handler runs. */
export const Input = z.object({
  prompt: z.string().min(1),
  times: z.number().int().min(1).max(10).default(1),
});
export type Input = z.infer<typeof Input>;

/** Returns one result. For a stream, make it an async generator: every `yield` becomes a chunk on /stream
 *  (`serverless-worker init --stream` writes that variant):
 *
 *    export const handler: Handler<Input> = async function* (job, ctx) {
 *      for (const word of job.input.prompt.split(' ')) yield `${word} `;
 *    };
 */
export const handler: Handler<Input> = async (job, ctx) => {
  ctx.log.info({ times: job.input.times }, 'repeating the prompt');
  // Pass ctx.signal to fetch() and check it in loops: it aborts on cancel, timeout and shutdown.
  if (ctx.signal.aborted) throw ctx.signal.reason;
  return { text: Array.from({ length: job.input.times }, () => job.input.prompt).join(' ') };
};

/** The options of serve(handler, options); the tests run the handler with the same ones. */
export const options: ServeOptions<Input> = {
  inputSchema: Input,
};
