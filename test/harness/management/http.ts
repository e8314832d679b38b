/**
 * @module test/harness/management/http
 * A tiny fetch wrapper for the management tests: JSON in, status and JSON out.
 */
export interface Reply<T = unknown> {
  status: number;
  body: T;
}

/** The harness's error body. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export type Call = <T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply<T>>;

/** A caller bound to `baseUrl`, sending `Authorization: Bearer <apiKey>` when a key is given. */
export function caller(baseUrl: string, apiKey?: string): Call {
  return async <T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = { ...extra };
    if (apiKey !== undefined && headers.authorization === undefined) headers.authorization = `Bearer ${apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text.length > 0 ? JSON.parse(text) : undefined) as T };
  };
}
