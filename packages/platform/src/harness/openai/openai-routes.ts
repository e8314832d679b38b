/**
 * @module harness/openai/openai-routes
 * The OpenAI-compatible routes under /v2/{endpointId}/openai/v1, declared once
 * (http/route-spec.ts): the plugin registers from them and the tests' route list is
 * derived from them.
 */
import { defineRoute } from '../http/route-spec.js';

const base = { prefix: '/v2', tag: 'OpenAI-compatible' } as const;

export const OPENAI_ROUTES = {
  call: defineRoute({
    ...base,
    method: 'POST',
    path: '/:endpointId/openai/v1/*',
    operationId: 'openai_call',
    summary: "An OpenAI-compatible call, passed to the endpoint's worker.",
    replyDescription: "The worker's answer, or its stream as server-sent events.",
  }),
  models: defineRoute({
    ...base,
    method: 'GET',
    path: '/:endpointId/openai/v1/models',
    operationId: 'openai_models',
    summary: "The worker's model list.",
    replyDescription: 'The models.',
  }),
};

export const OPENAI_API_ROUTES = Object.freeze(Object.values(OPENAI_ROUTES));
