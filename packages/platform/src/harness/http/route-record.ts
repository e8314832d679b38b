/**
 * @module harness/http/route-record
 * Path parameters and query strings as the hot routes read them without zod (the queue
 * API's plain-shapes.ts, the worker API's plain-params.ts): objects of the router's and the
 * query parser's own classes (find-my-way's NullObject), read by name.
 */

/** Any object but an array. */
export function isRouteRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
