/**
 * @module harness/http/queue-api/submit-routes
 * POST /run and POST /runsync (spec 4.2, 4.3), each with its own body limit
 * (10 MB and 20 MB, spec 8.1).
 */
import type { FastifyInstance } from 'fastify';
import { MAX_BODY_BYTES, isTerminal, parseJobRequest } from '../../../job/index.js';
import { requestSignal } from '../client-signal.js';
import { operationConfig } from '../route-config.js';
import { endpointOf, type QueueApiContext } from './context.js';
import { WaitQuerySchema, parseRequestPart } from './params.js';
import { plainJobRequest, plainWait } from './plain-shapes.js';

export function registerSubmitRoutes(app: FastifyInstance, context: QueueApiContext): void {
  app.post('/:endpointId/run', { bodyLimit: MAX_BODY_BYTES.run, config: operationConfig('run') }, async (request) => {
    const endpoint = endpointOf(context, request.params);
    const body = plainJobRequest(request.body) ?? parseJobRequest(request.body);
    context.checkInput?.(endpoint.id, body.input);
    const job = await endpoint.submit(body, { bytes: request.bodyBytes });
    // The spec answers IN_QUEUE on submission; a worker already waiting may take the
    // job in the same tick, which /status shows from the next call on.
    return { id: job.id, status: 'IN_QUEUE' as const };
  });

  app.post('/:endpointId/runsync', { bodyLimit: MAX_BODY_BYTES.runsync, config: operationConfig('runsync') }, async (request, reply) => {
    const endpoint = endpointOf(context, request.params);
    const wait = plainWait(request.query) ?? parseRequestPart(WaitQuerySchema, request.query, 'query string').wait;
    const body = plainJobRequest(request.body) ?? parseJobRequest(request.body);
    context.checkInput?.(endpoint.id, body.input);
    const submitted = await endpoint.submit(body, { sync: true, waitMs: wait, bytes: request.bodyBytes });
    const waiting = requestSignal(reply, context.closing);
    try {
      const view = await endpoint.waitForEnd(submitted.id, wait, waiting.signal);
      // Finished: the whole record. The wait elapsed first: id and status; clients poll on.
      return isTerminal(view.status) ? view : { id: view.id, status: view.status };
    } finally {
      waiting.dispose();
    }
  });
}
