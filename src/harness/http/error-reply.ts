/**
 * @module harness/http/error-reply
 * One place that turns any error into the harness's JSON error body
 * `{ error: { code, message, details? } }` with the status of its code. Fastify's own
 * errors (body too large, malformed JSON, bad content type) are mapped onto our codes,
 * so no error path answers 500 unless the harness itself is broken.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServerlessWorkerError, isServerlessWorkerError } from '../../job/index.js';

/** Map any thrown value onto a ServerlessWorkerError. */
export function toServerlessWorkerError(error: unknown, request?: FastifyRequest): ServerlessWorkerError {
  if (isServerlessWorkerError(error)) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request?.routeOptions.bodyLimit;
      return new ServerlessWorkerError(
        'SW_PAYLOAD_TOO_LARGE',
        `Request body is larger than this route allows${limit ? ` (${limit} bytes)` : ''}: send large inputs by reference (s3Config or a URL)`,
        limit ? { limitBytes: limit } : undefined,
      );
    }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ServerlessWorkerError('SW_INVALID_REQUEST', `Request body is not valid JSON: ${fastifyError.message ?? ''}`.trim());
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ServerlessWorkerError(
        'SW_INVALID_REQUEST',
        `Unsupported request body: ${fastifyError.message ?? ''}; send content-type: application/json`,
      );
    default:
      break;
  }
  if (error instanceof SyntaxError) {
    return new ServerlessWorkerError('SW_INVALID_REQUEST', `Request body is not valid JSON: ${error.message}`);
  }
  const statusCode = fastifyError.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new ServerlessWorkerError('SW_INVALID_REQUEST', fastifyError.message ?? 'Bad request');
  }
  return new ServerlessWorkerError('SW_INTERNAL', 'Internal error in the harness', undefined, { cause: error });
}

/** Send `error` as the harness's JSON error body. */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const coded = toServerlessWorkerError(error, reply.request);
  if (coded.code === 'SW_INTERNAL') reply.request.log.error({ err: coded.cause ?? coded }, 'internal error');
  return reply.code(coded.status).type('application/json; charset=utf-8').send(coded.toJSON());
}

/** Install the error handler on an app (or an encapsulated plugin scope). */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    void request;
    return sendError(reply, error);
  });
}
