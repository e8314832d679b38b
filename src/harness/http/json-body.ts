/**
 * @module harness/http/json-body
 * The queue API's body parser: every body is read as JSON whatever its content type
 * (`curl -d` sends application/x-www-form-urlencoded by default, and the job API only
 * speaks JSON), and an empty body is no body (`curl -X POST .../cancel/ID`), left for
 * the route to accept or refuse. Prototype poisoning is refused, as fastify's own
 * parser does.
 *
 * Before JSON.parse, one pass over the text (job/json-shape.ts, no recursion) refuses a
 * body nested deeper than MAX_JSON_DEPTH + 1 (the request object around the input) or
 * holding more than MAX_JSON_KEYS keys: nothing recursive ever meets such a value (a
 * deep one used to overflow the stack in later copies and replies, a 500 on every
 * read of the job). The body's size is kept on the request (`bodyBytes`) for the queue cap.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS, ServerlessWorkerError, jsonShape } from '../../job/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Size of the request body as received, in UTF-16 units of its text (bytes for ASCII); 0 without a body. */
    bodyBytes: number;
  }
}

/** Deepest body: the input's MAX_JSON_DEPTH plus the request object around it. */
const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 1;

/** The body's depth and key count, checked; throws SW_INPUT_TOO_DEEP or SW_INPUT_TOO_MANY_KEYS naming the limit and what was found. */
export function checkBodyShape(text: string): void {
  const shape = jsonShape(text, { maxDepth: MAX_BODY_DEPTH, maxKeys: MAX_JSON_KEYS });
  if (shape.over === 'depth') {
    throw new ServerlessWorkerError(
      'SW_INPUT_TOO_DEEP',
      `Request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep (the input at most ${MAX_JSON_DEPTH}): flatten it, or send the deep part as a JSON string`,
      { maxDepth: MAX_JSON_DEPTH, foundDepthAtLeast: shape.depth - 1 },
    );
  }
  if (shape.over === 'keys') {
    throw new ServerlessWorkerError(
      'SW_INPUT_TOO_MANY_KEYS',
      `Request body holds more than ${MAX_JSON_KEYS} object keys: send an array of values instead of many keys, or upload the data and send its URL`,
      { maxKeys: MAX_JSON_KEYS, foundKeysAtLeast: shape.keys },
    );
  }
}

/** Replace the scope's body parsers with the lenient JSON one (call inside a plugin). */
export function useLenientJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  if (!app.hasRequestDecorator('bodyBytes')) app.decorateRequest('bodyBytes', 0);
  app.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    request.bodyBytes = text.length;
    try {
      checkBodyShape(text);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
