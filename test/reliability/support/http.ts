/**
 * @module test/reliability/support/http
 * The tests' own HTTP client for the queue API: one undici Agent (no connection cap,
 * closed at the end of each test file), JSON in and out, every call bounded.
 */
import { Agent, request } from 'undici';

export interface JsonAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body as JSON; undefined when it is not JSON. */
  readonly json: unknown;
}

export class TestClient {
  readonly #agent = new Agent({ connections: null, keepAliveTimeout: 10_000, pipelining: 1 });

  async call(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS',
    url: string,
    options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<JsonAnswer> {
    const raw = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const response = await request(url, {
      dispatcher: this.#agent,
      method,
      headers: { ...(raw !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      ...(raw !== undefined ? { body: raw } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  }

  #closed: Promise<void> | undefined;

  /** Close every connection (once; later calls answer the same promise). */
  close(): Promise<void> {
    this.#closed ??= this.#agent.close();
    return this.#closed;
  }
}

/** Run `work` over `items` with at most `limit` at once; answers the results in order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const index = next++;
      if (index >= items.length) return;
      results[index] = await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}
