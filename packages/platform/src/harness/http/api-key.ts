/**
 * @module harness/http/api-key
 * API key checks for the harness. `Authorization: Bearer <key>` and the bare key are
 * both accepted (some platform samples send the bare key, and the worker protocol
 * always does). Keys are compared in constant time over their SHA-256 digests, so
 * neither content nor length leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ServerlessWorkerError } from 'serverless-worker/internal';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The key carried by an Authorization header value, without a `Bearer ` prefix. */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  const match = /^bearer\s+(.+)$/i.exec(trimmed);
  return match?.[1]?.trim() ?? (trimmed.length > 0 ? trimmed : undefined);
}

/** A checker for one configured key; constant time in the key's content and length. */
export function createApiKeyCheck(expectedKey: string): (header: string | undefined) => boolean {
  const expected = digest(expectedKey);
  return (header) => {
    const given = keyFromAuthorization(header);
    return timingSafeEqual(digest(given ?? ''), expected) && given !== undefined;
  };
}

/**
 * A fastify onRequest hook that answers 401 (SW_UNAUTHORIZED) unless the key matches
 * (routes marked `public` excepted). A callback hook, answered in the same turn: an async
 * one costs a promise and a turn of the microtask queue on every request (issue 46).
 */
export function apiKeyHook(expectedKey: string): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  const check = createApiKeyCheck(expectedKey);
  return (request, _reply, done) => {
    if (request.routeOptions.config.public === true || check(request.headers.authorization)) {
      done();
      return;
    }
    done(
      new ServerlessWorkerError(
        'SW_UNAUTHORIZED',
        request.headers.authorization === undefined ? 'Missing API key: send Authorization: Bearer <key>' : 'Wrong API key in the Authorization header',
      ),
    );
  };
}
