/**
 * @module test/reliability/support/queue
 * The queue API as a caller uses it, over HTTP: submit with /run, wait for the end with
 * /status-sync, read a stream with /stream until its job has ended. Every loop bounded.
 */
import { isTerminal, type JobRequestInput, type JobStatus, type JobView, type StreamChunk } from '../../../src/job/index.js';
import type { TestClient } from './http.js';

export class QueueCaller {
  readonly #client: TestClient;
  /** `http://127.0.0.1:<port>/v2/<endpoint>` */
  readonly base: string;
  readonly #headers: Record<string, string>;

  constructor(client: TestClient, base: string, apiKey?: string) {
    this.#client = client;
    this.base = base;
    this.#headers = apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {};
  }

  /** POST /run; answers the job id. */
  async run(request: JobRequestInput): Promise<string> {
    const answer = await this.#client.call('POST', `${this.base}/run`, { body: request, headers: this.#headers });
    if (answer.status !== 200) throw new Error(`POST /run answered ${answer.status}: ${answer.text}`);
    return (answer.json as { id: string }).id;
  }

  /** The job's view once it has ended (GET /status-sync in rounds); throws past `timeoutMs`. */
  async ended(id: string, timeoutMs = 60_000): Promise<JobView> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const wait = Math.max(1_000, Math.min(10_000, deadline - Date.now()));
      const answer = await this.#client.call('GET', `${this.base}/status-sync/${id}?wait=${wait}`, { headers: this.#headers, timeoutMs: wait + 10_000 });
      if (answer.status !== 200) throw new Error(`GET /status-sync/${id} answered ${answer.status}: ${answer.text}`);
      const view = answer.json as JobView;
      if (isTerminal(view.status)) return view;
    }
    throw new Error(`job ${id} did not end within ${timeoutMs} ms`);
  }

  /** Every chunk /stream hands out until the job's status is final (or `until` says stop). */
  async stream(id: string, timeoutMs = 60_000, until: (status: JobStatus) => boolean = isTerminal): Promise<{ status: JobStatus; chunks: StreamChunk[] }> {
    const deadline = Date.now() + timeoutMs;
    const chunks: StreamChunk[] = [];
    while (Date.now() < deadline) {
      const answer = await this.#client.call('GET', `${this.base}/stream/${id}?wait=2000`, { headers: this.#headers });
      if (answer.status !== 200) throw new Error(`GET /stream/${id} answered ${answer.status}: ${answer.text}`);
      const { status, stream } = answer.json as { status: JobStatus; stream: StreamChunk[] };
      chunks.push(...stream);
      if (until(status)) return { status, chunks };
    }
    throw new Error(`stream of job ${id} did not end within ${timeoutMs} ms`);
  }

  /** POST /retry/{id}. */
  async retry(id: string): Promise<void> {
    const answer = await this.#client.call('POST', `${this.base}/retry/${id}`, { headers: this.#headers });
    if (answer.status !== 200) throw new Error(`POST /retry/${id} answered ${answer.status}: ${answer.text}`);
  }
}

/** The error payload of a FAILED or TIMED_OUT view (JSON text on the wire). */
export function errorOf(view: JobView): Record<string, unknown> {
  const error: unknown = view.error;
  return (typeof error === 'string' ? JSON.parse(error) : error) as Record<string, unknown>;
}
