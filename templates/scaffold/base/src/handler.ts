/**
 * The worker: what a job's input looks like, what init loads once at start-up, what the
 * handler does with a job, and the options of serve(). src/worker.ts starts it;
 * test/handler.test.ts tests it.
 */
import type { Handler, ServeOptions } from 'serverless-worker';
import * as z from 'zod';

/** A job's input. Input that does not match fails the job (SW_INPUT_VALIDATION) before the handler runs. */
export const Input = z.object({
  prompt: z.string().min(1),
  times: z.number().int().min(1).max(10).default(1),
});
export type Input = z.infer<typeof Input>;

/**
 * What `init` (in the options below) loads once, before the first job: every job gets it
 * as `ctx.state`. Put here what is slow to make and shared by every job: a model, a
 * client, a started inference server. The same `State` types the handler
 * (`Handler<Input, State>`) and the options (`ServeOptions<Input, State>`); the tests
 * run init the same way (runJob), or pass a fake one (`runJob(handler, request, { options, state })`).
 */
export interface State {
  /** Joins the repeated prompt. */
  readonly separator: string;
}

/** Returns one result. For a stream, make it an async generator: every `yield` becomes a chunk on /stream
 *  (`serverless-worker init --stream` writes that variant):
 *
 *    export const handler: Handler<Input, State> = async function* (job, ctx) {
 *      for (const word of job.input.prompt.split(' ')) yield `${word} `;
 *    };
 */
export const handler: Handler<Input, State> = async (job, ctx) => {
  ctx.log.info({ times: job.input.times }, 'repeating the prompt');
  // Pass ctx.signal to fetch() and check it in loops: it aborts on cancel, timeout and shutdown.
  if (ctx.signal.aborted) throw ctx.signal.reason;
  return { text: Array.from({ length: job.input.times }, () => job.input.prompt).join(ctx.state.separator) };
};

/** The options of serve(handler, options); the tests run the handler with the same ones. */
export const options: ServeOptions<Input, State> = {
  inputSchema: Input,
  // Runs once before the first job is taken, bounded by initTimeoutMs (default 10 minutes);
  // throwing fails the start (the worker takes no job and exits 1). Pass ctx.signal to
  // fetch() and child processes: it aborts on SIGTERM during start-up and on the timeout.
  init: async (ctx) => {
    ctx.log.info('loading the state');
    // e.g. `return { model: await loadModel('/runpod-volume/model', { signal: ctx.signal }) };`
    return { separator: ' ' };
  },
};
