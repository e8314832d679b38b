/**
 * @module harness/http/rate-limit/rate-limit-hook
 * The fastify onRequest hook that applies the spec 8.2 limits per endpoint and
 * operation. A refused request gets 429 SW_RATE_LIMITED with `Retry-After` (whole
 * seconds). An accepted one holds a concurrency slot until its response closes,
 * whichever way it closes (answered, hijacked stream ended, client gone).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Harness, ServerlessWorkerError } from 'serverless-worker/internal';
import { effectiveLimit, type OperationLimit, type RateLimitedOperation } from './limits.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

export interface RateLimitHookOptions {
  readonly harness: Harness;
  readonly limiter: RateLimiter;
  readonly limits: Readonly<Record<RateLimitedOperation, OperationLimit>>;
  readonly requestsPerWorker: number;
}

/** Workers up on an endpoint (idle or busy): the "running workers" of spec 8.2. */
async function workersUp(harness: Harness, endpointId: string): Promise<number> {
  const counts = await harness.findEndpoint(endpointId)?.workers.counts();
  return counts ? counts.idle + counts.running : 0;
}

/** The limiter as the hook uses it: the limit of an operation now, and one request counted under it. */
export interface RateGate {
  /** The limit of `operation` on the endpoint now (it grows with its workers). */
  limitFor(endpointId: string, operation: RateLimitedOperation): Promise<OperationLimit>;
  /** Count one request under `limit`, or refuse it (a refusal counts nothing). */
  acquire(endpointId: string, operation: RateLimitedOperation, limit: OperationLimit): RateDecision;
}

export function rateGate(options: RateLimitHookOptions): RateGate {
  const { harness, limiter, limits, requestsPerWorker } = options;
  return {
    limitFor: async (endpointId, operation) => effectiveLimit(limits[operation], await workersUp(harness, endpointId), requestsPerWorker),
    acquire: (endpointId, operation, limit) => limiter.acquire(`${endpointId}\u0000${operation}`, limit),
  };
}

export function rateLimitHook(
  options: RateLimitHookOptions,
  gate: RateGate = rateGate(options),
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const { limiter } = options;
  return async (request, reply) => {
    const operation = request.routeOptions.config.operation;
    if (operation === undefined) return;
    const endpointId = (request.params as { endpointId?: unknown } | undefined)?.endpointId;
    if (typeof endpointId !== 'string') return;
    const decision = gate.acquire(endpointId, operation, await gate.limitFor(endpointId, operation));
    if (decision.allowed) {
      reply.raw.once('close', decision.release);
      return;
    }
    const retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    void reply.header('retry-after', String(retryAfterSeconds));
    const what =
      decision.reason === 'rate'
        ? `${decision.limit.perWindow} requests per ${limiter.windowMs / 1000} s`
        : `${decision.limit.concurrent ?? 0} concurrent requests`;
    throw new ServerlessWorkerError(
      'SW_RATE_LIMITED',
      `Rate limit of ${operation} on endpoint ${endpointId} exceeded (${what}); retry after ${retryAfterSeconds} s`,
      { endpointId, operation, reason: decision.reason, limit: decision.limit, retryAfterSeconds },
    );
  };
}
