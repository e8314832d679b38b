/**
 * @module bench/lib/http-client
 * The client side of the queue API for benchmarks: undici, keep-alive connections,
 * JSON in and out, and a /stream reader that notes when each piece of text became
 * visible.
 */
import { Pool } from 'undici';
import { preciseNow } from './clock.js';

export class QueueClient {
  readonly pool: Pool;
  readonly #base: string;

  /** `url`: the harness origin; `endpointId`: paths under /v2/<endpointId>, or at the root when empty; `connections`: most sockets at once. */
  constructor(url: string, endpointId: string, connections: number) {
    this.pool = new Pool(url, { connections, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
    this.#base = endpointId === '' ? '' : `/v2/${endpointId}`;
  }

  async json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await this.pool.request({
      method,
      path: `${this.#base}${path}`,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    const parsed = (await response.body.json()) as T;
    if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}: ${JSON.stringify(parsed)}`);
    return parsed;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export interface JobView {
  readonly id: string;
  readonly status: string;
  readonly executionTime?: number;
  readonly delayTime?: number;
}

interface StreamAnswer {
  readonly status: string;
  readonly stream: ReadonlyArray<{ readonly output: unknown }>;
}

export interface StreamRead {
  /** Text length visible after each answer, and when the answer arrived (epoch ms). */
  readonly marks: ReadonlyArray<{ readonly length: number; readonly at: number }>;
  readonly chunks: number;
  readonly textLength: number;
  readonly status: string;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

/** Read /stream/{id} until the job has ended and nothing is left unread, or `timeoutMs` passes. */
export async function readStream(client: QueueClient, jobId: string, timeoutMs: number): Promise<StreamRead> {
  const deadline = Date.now() + timeoutMs;
  const marks: Array<{ length: number; at: number }> = [];
  let length = 0;
  let chunks = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`/stream of ${jobId} did not end within ${timeoutMs} ms (${chunks} chunks read)`);
    const answer = await client.json<StreamAnswer>('GET', `/stream/${jobId}?wait=5000`);
    const at = preciseNow();
    for (const chunk of answer.stream) {
      const output = chunk.output;
      if (typeof output === 'string') length += output.length;
      else if (typeof output === 'object' && output !== null && typeof (output as { text?: unknown }).text === 'string') {
        // A yield of `{ i, text }` objects (bench-handler's `objects`): its text counts, and each must come in order.
        const { i, text } = output as { i?: unknown; text: string };
        if (i !== chunks) throw new Error(`/stream of ${jobId}: object ${String(i)} read where ${chunks} was expected (out of order)`);
        length += text.length;
      }
      chunks++;
    }
    if (answer.stream.length > 0) marks.push({ length, at });
    if (TERMINAL.has(answer.status) && answer.stream.length === 0) return { marks, chunks, textLength: length, status: answer.status };
  }
}

/** For each yield `i` of `size` characters, when the text up to its end became visible, minus when it was yielded, ms. */
export function visibleDelays(read: StreamRead, yieldTimes: Float64Array, size: number): number[] {
  const delays: number[] = [];
  let m = 0;
  for (let i = 0; i < yieldTimes.length; i++) {
    const end = (i + 1) * size;
    while (m < read.marks.length && (read.marks[m] as { length: number }).length < end) m++;
    const mark = read.marks[m];
    if (!mark) break;
    delays.push(mark.at - (yieldTimes[i] as number));
  }
  return delays;
}

export { preciseNow };

/**
 * One no-op job through the queue API: `/runsync`, or `/run` then `/status` until it
 * ends; answers how many /status calls it took (0 for /runsync). Throws on any end but
 * COMPLETED.
 */
export async function runOneJob(client: QueueClient, via: 'runsync' | 'run+status'): Promise<number> {
  if (via === 'runsync') {
    const view = await client.json<JobView>('POST', '/runsync', { input: {} });
    if (view.status !== 'COMPLETED') throw new Error(`runsync answered ${view.status}`);
    return 0;
  }
  const { id } = await client.json<JobView>('POST', '/run', { input: {} });
  for (let polls = 1; ; polls++) {
    const view = await client.json<JobView>('GET', `/status/${id}`);
    if (view.status === 'COMPLETED') return polls;
    if (view.status !== 'IN_QUEUE' && view.status !== 'IN_PROGRESS') throw new Error(`job ${id} ended ${view.status}`);
  }
}
