/**
 * @module test/kit/http
 * A small HTTP client for tests: `call` answers whatever came back (status, headers,
 * text, JSON); `fetchOkJson` (GET by default) and `postJson` insist on a 2xx answer
 * and throw with the method, URL, status and body otherwise.
 */

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** One request; `body` objects are sent as JSON, strings and buffers as they are. */
export async function call(
  method: string,
  url: string,
  options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HttpAnswer> {
  const { body } = options;
  const raw = body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method,
    ...(raw !== undefined ? { body: raw } : {}),
    headers: { ...(raw !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * `method url` (a JSON body when given, `headers` added) whose answer must be 2xx: its
 * body parsed (undefined when empty); otherwise throws with the status and body.
 */
export async function fetchOkJson<T>(url: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** POST `body` as JSON to `url`, 2xx or throw: the parsed body. */
export function postJson<T>(url: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  return fetchOkJson<T>(url, 'POST', body, headers);
}

/** The `error.code` of an error answer. */
export function errorCode(answer: HttpAnswer): unknown {
  return (answer.json as { error?: { code?: unknown } } | undefined)?.error?.code;
}
