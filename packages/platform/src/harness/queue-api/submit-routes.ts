/**
 * @module harness/queue-api/submit-routes
 * POST /run and POST /runsync (spec 4.2, 4.3), each with its own body limit
 * (10 MB and 20 MB, spec 8.1).
 */
import type { FastifyInstance } from 'fastify';
import { isTerminal, type JobRequest, MAX_BODY_BYTES, parseJobRequest, RawJson, ServerlessWorkerError } from 'serverless-worker/internal';
import { requestSignal } from '../http/client-signal.js';
import { operationConfig } from '../http/route-config.js';
import { registerRoute } from '../http/route-spec.js';
import { QUEUE_ROUTES } from './queue-routes.js';
import { endpointOf, type QueueApiContext } from './context.js';
import { WaitQuerySchema, parseRequestPart } from './params.js';
import { plainJobRequest, plainWait } from './plain-shapes.js';
import { QueueRoomReservations, earlyQueueRoomHook } from './early-queue-room.js';

/**
 * The body as a validated job request. A large body's input arrives as its text
 * (RawJson, json-body.ts): the envelope is validated with an empty input in its place,
 * and the text, which must be a JSON object, is queued as it is.
 */
export function jobRequestOf(body: unknown, context: QueueApiContext, endpointId: string): JobRequest {
  const raw = typeof body === 'object' && body !== null ? (body as { input?: unknown }).input : undefined;
  if (!(raw instanceof RawJson)) {
    const request = plainJobRequest(body) ?? parseJobRequest(body);
    context.checkInput?.(endpointId, request.input);
    return request;
  }
  if (!raw.text.startsWith('{')) {
    throw new ServerlessWorkerError('SW_INVALID_JOB_REQUEST', `Invalid job request: input must be a JSON object (got ${raw.text.slice(0, 20)}...)`, {
      issues: [{ path: 'input', message: 'input must be a JSON object' }],
    });
  }
  const envelope = parseJobRequest({ ...(body as Record<string, unknown>), input: {} });
  // A schema of the worker's own (--serve-api) parses the text to check it; none here does not.
  context.checkInput?.(endpointId, raw);
  return { ...envelope, input: raw as unknown as JobRequest['input'] };
}

export function registerSubmitRoutes(app: FastifyInstance, context: QueueApiContext): void {
  // A body the queue cap cannot take is refused before it is read (early-queue-room.ts).
  const onRequest = earlyQueueRoomHook(context.queueRoom ?? new QueueRoomReservations(context.harness));
  registerRoute(app, QUEUE_ROUTES.run, { bodyLimit: MAX_BODY_BYTES.run, config: operationConfig('run'), onRequest }, async (request) => {
    const endpoint = endpointOf(context, request.params);
    const body = jobRequestOf(request.body, context, endpoint.id);
    const job = await endpoint.submit(body, { bytes: request.bodyBytes });
    // The spec answers IN_QUEUE on submission; a worker already waiting may take the
    // job in the same tick, which /status shows from the next call on.
    return { id: job.id, status: 'IN_QUEUE' as const };
  });

  registerRoute(app, QUEUE_ROUTES.runsync, { bodyLimit: MAX_BODY_BYTES.runsync, config: operationConfig('runsync'), onRequest }, async (request, reply) => {
    const endpoint = endpointOf(context, request.params);
    const wait = plainWait(request.query) ?? parseRequestPart(WaitQuerySchema, request.query, 'query string').wait;
    const body = jobRequestOf(request.body, context, endpoint.id);
    const waiting = requestSignal(reply, context.closing);
    try {
      const view = await endpoint.submitAndWait(body, { sync: true, waitMs: wait, bytes: request.bodyBytes }, wait, waiting.signal);
      // Finished: the whole record. The wait elapsed first: id and status; clients poll on.
      return isTerminal(view.status) ? view : { id: view.id, status: view.status };
    } finally {
      waiting.dispose();
    }
  });
}
