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
 * read of the job). The body's size is kept on the request (`bodyBytes`) for the queue
 * cap. The queue API's large bodies are checked off the loop (off-loop-body-check.ts).
 */
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_KEYS, RawJson, ServerlessWorkerError } from 'serverless-worker/internal';
import { checkBodyOffThread } from './off-loop-body-check.js';

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
  if (shape.over !== undefined) throw shapeError(shape.over, shape.depth, shape.keys);
}

function shapeError(over: 'depth' | 'keys', depth: number, keys: number): ServerlessWorkerError {
  if (over === 'depth') {
    return new ServerlessWorkerError(
      'SW_INPUT_TOO_DEEP',
      `Request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep (the input at most ${MAX_JSON_DEPTH}): flatten it, or send the deep part as a JSON string`,
      { maxDepth: MAX_JSON_DEPTH, foundDepthAtLeast: depth - 1 },
    );
  }
  return new ServerlessWorkerError(
    'SW_INPUT_TOO_MANY_KEYS',
    `Request body holds more than ${MAX_JSON_KEYS} object keys: send an array of values instead of many keys, or upload the data and send its URL`,
    { maxKeys: MAX_JSON_KEYS, foundKeysAtLeast: keys },
  );
}

/**
 * Bodies from this size (64 KiB, in characters) are checked off the event loop and their input
 * kept as text (RawJson) when `rawInput`: JSON.parse of smaller ones costs under a few ms.
 */
export const RAW_INPUT_MIN_CHARS = 64 * 1024;

type Done = (error: Error | null, body?: unknown) => void;
type JsonParser = (request: FastifyRequest, body: string, done: Done) => void;

/**
 * A large body: checked by the body check thread; its top-level input kept as the text
 * received, the envelope around it parsed here (small). Anything unusual (no input
 * found, a guarded key, an escaped "input" key) is parsed whole by fastify's parser.
 */
function parseLargeBody(request: FastifyRequest, text: string, parseJson: JsonParser, done: Done): void {
  checkBodyOffThread(text, { maxDepth: MAX_BODY_DEPTH, maxKeys: MAX_JSON_KEYS }).then(
    (facts) => {
      if (facts.over !== undefined) return done(shapeError(facts.over, facts.depth, facts.keys));
      if (facts.syntaxError !== undefined) return done(new ServerlessWorkerError('SW_INVALID_REQUEST', `Request body is not valid JSON: ${facts.syntaxError}`));
      if (facts.guarded || facts.inputStart < 0 || facts.inputEnd < facts.inputStart) return parseJson(request, text, done);
      const input = text.slice(facts.inputStart, facts.inputEnd).trim();
      parseJson(request, `${text.slice(0, facts.inputStart)}0${text.slice(facts.inputEnd)}`, (error, envelope) => {
        if (error) return done(error);
        // The envelope's input must be the 0 put in its place (not an escaped "input" key's value).
        if (typeof envelope !== 'object' || envelope === null || (envelope as { input?: unknown }).input !== 0) return parseJson(request, text, done);
        done(null, { ...(envelope as Record<string, unknown>), input: new RawJson(input) });
      });
    },
    (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
  );
}

/**
 * Whether a key of `text` could be `__proto__` or `constructor` once parsed: written plainly,
 * or with any of its letters escaped (`\u005f`). Only such a text needs the prototype
 * poisoning check of fastify's parser (secure-json-parse: two regular expressions over the
 * text, then a walk of the parsed value); every other text is parsed by JSON.parse alone.
 */
export function mayPoisonPrototype(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

/**
 * The body parsed as fastify's parser parses it, cheaper for the common body (issue 46):
 * JSON.parse alone when the text can hold no `__proto__` nor `constructor` key and starts
 * with no byte-order mark; else fastify's parser, which refuses a poisoned body. A text
 * JSON.parse refuses gets fastify's own error (FST_ERR_CTP_INVALID_JSON_BODY), as from its parser.
 */
export function fastJsonParser(parseJson: JsonParser): JsonParser {
  return (request, text, done) => {
    if (text.charCodeAt(0) === 0xfeff || mayPoisonPrototype(text)) {
      void parseJson(request, text, done);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    done(null, body);
  };
}

/**
 * Replace the scope's body parsers with the lenient JSON one (call inside a plugin).
 * `rawInput` (the queue API): a body of RAW_INPUT_MIN_CHARS or more is checked off the
 * event loop and its `input` arrives as a RawJson (job/raw-json.ts).
 *
 * The parser is the catch-all (`*`) and also `application/json`'s own: fastify looks a
 * catch-all up by parsing the Content-Type header into an object on every request, while
 * a named type is found in its cache by the header's text (issue 46).
 */
export function useLenientJsonBodies(app: FastifyInstance, options: { readonly rawInput?: boolean } = {}): void {
  const secureParse = app.getDefaultJsonParser('error', 'error');
  const parseJson = fastJsonParser(secureParse);
  app.removeAllContentTypeParsers();
  if (!app.hasRequestDecorator('bodyBytes')) app.decorateRequest('bodyBytes', 0);
  const parser = (request: FastifyRequest, body: string | Buffer, done: Done): void => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    request.bodyBytes = text.length;
    if (options.rawInput === true && text.length >= RAW_INPUT_MIN_CHARS) {
      parseLargeBody(request, text, secureParse, done);
      return;
    }
    try {
      checkBodyShape(text);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    parseJson(request, text, done);
  };
  app.addContentTypeParser('*', { parseAs: 'string' }, parser);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parser);
}
