/**
 * @module harness/openai/openai-errors
 * Errors on the OpenAI-compatible routes in OpenAI's shape, so that the `openai`
 * clients raise their usual APIError with a useful message:
 * `{ "error": { "message", "type", "param": null, "code": "SW_...", "details"? } }`.
 * `code` is our stable code, as on every other route.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerlessWorkerError } from 'serverless-worker/internal';
import { answerAfterBody } from '../http/early-answer.js';
import { toServerlessWorkerError } from '../http/error-reply.js';

/** OpenAI's error `type` for an HTTP status. */
export function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 404) return 'not_found_error';
  if (status < 500) return 'invalid_request_error';
  return 'server_error';
}

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: null; code: string; details?: Readonly<Record<string, unknown>> };
}

export function openAiErrorBody(error: ServerlessWorkerError): OpenAiErrorBody {
  return {
    error: {
      message: error.message,
      type: openAiErrorType(error.status),
      param: null,
      code: error.code,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}

/** Answer errors in this scope (the OpenAI routes, their auth and rate-limit hooks) in OpenAI's shape. */
export function installOpenAiErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const coded = toServerlessWorkerError(error, request);
    if (coded.code === 'SW_INTERNAL') request.log.error({ err: coded.cause ?? coded }, 'internal error');
    return answerAfterBody(reply, coded.status, openAiErrorBody(coded));
  });
}
