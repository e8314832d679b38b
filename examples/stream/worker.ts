/**
 * Streaming worker: yields the words of its prompt one token at a time, like a
 * language model would, with token counts in each chunk's metrics.
 * Dry run: `npx tsx examples/stream/worker.ts --test-input @examples/stream/test_input.json`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { serve, withMetrics } from 'serverless-worker';

const Input = z.object({
  prompt: z.string().min(1),
  /** Pause between tokens, ms. */
  delayMs: z.number().int().min(0).max(1_000).default(10),
});

await serve<z.infer<typeof Input>>(
  async function* (job, ctx) {
    const tokens = job.input.prompt.split(/(?<=\s)/);
    let outputTokens = 0;
    for (const token of tokens) {
      if (ctx.signal.aborted) return;
      await sleep(job.input.delayMs, undefined, { signal: ctx.signal }).catch(() => undefined);
      outputTokens++;
      yield withMetrics(token, { output_tokens: outputTokens, input_tokens: tokens.length });
    }
  },
  { inputSchema: Input, aggregateStream: true },
);
