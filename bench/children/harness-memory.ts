/**
 * @module bench/children/harness-memory
 * The harness process holding finished jobs: a Harness with its HTTP server listening
 * (as `serverless-worker harness` runs it), `jobs` jobs submitted from freshly parsed
 * requests (as /run would), handed out and completed with a small output each, then
 * kept for their retention. Answers RSS and heap before and after, after a full GC.
 * Run with --expose-gc.
 */
import { Harness } from '../../src/harness/index.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { parseJobRequest } from '../../src/job/index.js';

interface Go {
  readonly type: 'go';
  readonly jobs: number;
}

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage();
}

process.on('message', (message: Go) => {
  void (async () => {
    const harness = new Harness();
    const server = await createHarnessServer({ harness, port: 0, management: false });
    const endpoint = harness.endpoint('memory');
    const before = settle();
    const workerId = 'memory-worker';
    const BATCH = 1_000;
    for (let done = 0; done < message.jobs; done += BATCH) {
      const n = Math.min(BATCH, message.jobs - done);
      for (let i = 0; i < n; i++) await endpoint.submit(parseJobRequest({ input: { prompt: 'Say hello', n: done + i } }));
      for (const job of await endpoint.tryTake(workerId, n)) await endpoint.complete(job.id, workerId, { kind: 'output', output: { text: 'hello', n: done } });
    }
    const after = settle();
    const held = (await endpoint.health()).jobs.completed;
    process.send?.({ type: 'done', before, after, held });
    await server.close();
    await harness.close();
  })().catch((error: unknown) => process.send?.({ type: 'error', message: String(error instanceof Error ? error.stack : error) }));
});
process.send?.({ type: 'ready' });
process.on('disconnect', () => process.exit(0));
