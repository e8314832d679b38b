/**
 * Echo worker: answers its input back, with the time it took.
 * Dry run: `npx tsx examples/echo/worker.ts` (reads test_input.json beside you) or
 * `npx tsx examples/echo/worker.ts --test-input '{"input":{"message":"hi"}}'`.
 */
import * as z from 'zod';
import { serve } from 'serverless-worker';

const Input = z.object({ message: z.string().min(1), shout: z.boolean().default(false) });

await serve<z.infer<typeof Input>>(
  async (job, ctx) => {
    ctx.log.info({ length: job.input.message.length }, 'echoing');
    const message = job.input.shout ? job.input.message.toUpperCase() : job.input.message;
    return { echo: message, workerId: ctx.workerId };
  },
  { inputSchema: Input },
);
