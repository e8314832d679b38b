/**
 * @module harness/http/json-body
 * The queue API's body parser: every body is read as JSON whatever its content type
 * (`curl -d` sends application/x-www-form-urlencoded by default, and the job API only
 * speaks JSON), and an empty body is no body (`curl -X POST .../cancel/ID`), left for
 * the route to accept or refuse. Prototype poisoning is refused, as fastify's own
 * parser does.
 */
import type { FastifyInstance } from 'fastify';

/** Replace the scope's body parsers with the lenient JSON one (call inside a plugin). */
export function useLenientJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
