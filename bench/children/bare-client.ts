/**
 * @module bench/children/bare-client
 * The ceiling's load generator: `concurrency` loops, each POSTing a JSON body (small, or
 * `{"output": "<textBytes characters>"}`)
 * with undici (one keep-alive Agent, as the platform transport uses) and reading the
 * answer, for `durationMs`. Answers `{ type: 'done', requests, elapsedMs, p50, p99 }`
 * over IPC when asked with `{ type: 'go', url, concurrency, durationMs }`.
 */
import { Agent, request } from 'undici';
import { percentile } from '../lib/stats.js';

interface Go {
  readonly type: 'go';
  readonly url: string;
  readonly concurrency: number;
  readonly durationMs: number;
  /** Characters of text in each body's `output`; default 0 (`{"output":{}}`). */
  readonly textBytes?: number;
}

const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
async function loop(url: string, until: number, latencies: number[], body: string): Promise<number> {
  let n = 0;
  while (performance.now() < until) {
    const t = performance.now();
    const response = await request(url, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
    await response.body.text();
    latencies.push(performance.now() - t);
    n++;
  }
  return n;
}

process.on('message', (message: Go) => {
  void (async () => {
    const latencies: number[] = [];
    const start = performance.now();
    const until = start + message.durationMs;
    const text = message.textBytes ? 'x'.repeat(message.textBytes) : undefined;
    const body = JSON.stringify({ output: text ?? {} });
    const counts = await Promise.all(Array.from({ length: message.concurrency }, () => loop(message.url, until, latencies, body)));
    const elapsedMs = performance.now() - start;
    process.send?.({
      type: 'done',
      requests: counts.reduce((a, b) => a + b, 0),
      elapsedMs,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    });
  })().catch((error: unknown) => process.send?.({ type: 'error', message: String(error) }));
});
process.send?.({ type: 'ready' });
process.on('disconnect', () => process.exit(0));
