/**
 * @module harness/openai
 * OpenAI-compatible access (spec 1, worker-protocol 2) under `/v2`:
 * `POST /{endpoint}/openai/v1/<route>` becomes a job with input
 * `{openai_route: "/v1/<route>", openai_input: <body>}`, and `GET
 * /{endpoint}/openai/v1/models` one with `openai_input: {}`. Errors here are in
 * OpenAI's shape (openai-errors.ts).
 * Layer: harness feature (docs/architecture.md): owns its routes; builds on queue-api/.
 */
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { MAX_BODY_BYTES, previewValue, ServerlessWorkerError } from 'serverless-worker/internal';
import { useLenientJsonBodies } from '../http/json-body.js';
import { endpointOf } from '../queue-api/context.js';
import { parseRequestPart } from '../queue-api/params.js';
import { operationConfig } from '../http/route-config.js';
import { registerRoute } from '../http/route-spec.js';
import { OPENAI_ROUTES } from './openai-routes.js';
import { runOpenAiCall, type OpenAiContext } from './openai-call.js';
import { installOpenAiErrorHandler } from './openai-errors.js';
import { refuseWithoutWorker } from './models-without-worker.js';

export type { OpenAiContext } from './openai-call.js';
export * from './openai-errors.js';
export * from './openai-result.js';
export * from './sse-framer.js';

const RouteParamsSchema = z.object({
  '*': z
    .string()
    .regex(/^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/, { error: 'the OpenAI route must be path segments like chat/completions' })
    .refine((route) => !route.split('/').includes('..'), { error: 'the OpenAI route must not contain ".."' }),
});

function requestBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServerlessWorkerError('SW_INVALID_REQUEST', `The OpenAI request body must be a JSON object, got ${previewValue(body)}`);
  }
  return body as Record<string, unknown>;
}

/** Register the OpenAI-compatible routes; mount with `prefix: '/v2'`. */
export async function openAiRoutes(app: FastifyInstance, context: OpenAiContext): Promise<void> {
  useLenientJsonBodies(app);
  installOpenAiErrorHandler(app);

  registerRoute(app, OPENAI_ROUTES.call, { bodyLimit: MAX_BODY_BYTES.runsync, config: operationConfig('openai') }, async (request, reply) => {
    const endpoint = endpointOf(context, request.params);
    const { '*': route } = parseRequestPart(RouteParamsSchema, request.params, 'path');
    const body = requestBody(request.body);
    return runOpenAiCall(context, { endpoint, route: `/v1/${route}`, body, stream: body.stream === true }, reply);
  });

  registerRoute(app, OPENAI_ROUTES.models, { config: operationConfig('openai') }, async (request, reply) => {
    // Only a worker can list its models: with none, the call used to wait out the whole OpenAI timeout (600 s).
    await refuseWithoutWorker(context, request.params);
    const endpoint = endpointOf(context, request.params);
    return runOpenAiCall(context, { endpoint, route: '/v1/models', body: {}, stream: false }, reply);
  });
}
