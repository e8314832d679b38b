/**
 * @module transports/platform/retryable-status
 * Which answers of the platform are worth another try of a post.
 */

/** Statuses worth another try of a post: overload, rate limit, gateway trouble. Another 4xx is final. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}
