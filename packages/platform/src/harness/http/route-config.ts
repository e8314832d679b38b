/**
 * @module harness/http/route-config
 * What a queue API route declares about itself in its fastify `config`: the operation
 * it counts as for rate limits (spec 8.2). Hooks read it from `request.routeOptions.config`.
 */
import type { RateLimitedOperation } from './rate-limit/limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec 8.2 operation this route counts as; routes without one are not rate limited. */
    operation?: RateLimitedOperation;
    /** A route anyone may read without the API key (the dashboard's page and modules, which hold no data); registerRoute sets it from the route table's `auth: false`. */
    public?: boolean;
  }
}

/** The route config for an operation. */
export function operationConfig(operation: RateLimitedOperation): { operation: RateLimitedOperation } {
  return { operation };
}
