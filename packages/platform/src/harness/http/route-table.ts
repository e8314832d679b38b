/**
 * @module harness/http/route-table
 * 404 and 405 for the whole server. Fastify answers 404 for a known path asked with
 * the wrong method; the table below remembers every route's pattern (collected by an
 * onRoute hook, so plugins registered later are included), and the not-found handler
 * answers 405 SW_METHOD_NOT_ALLOWED with an `Allow` header when another method matches
 * the path, else 404 SW_ROUTE_NOT_FOUND.
 *
 * Fastify reads a body before its not-found handler runs; a body that waits for a read
 * slot (body-read-gate.ts) would make the 404 wait behind other uploads for nothing, so
 * such a request is answered from an onRequest hook, before its body is read (one declared
 * over the not-found route's body limit is left to fastify's 413, which reads nothing).
 * That hook and the not-found handler live in a plugin of their own: a hook added in the
 * plugin that sets the not-found handler runs for unmatched requests only, so the routes
 * pay nothing for it (a server-wide hook ran on every request: issue 46).
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { waitsForBodySlot } from './body-read-gate.js';

interface PatternEntry {
  readonly regex: RegExp;
  readonly methods: Set<string>;
}

/** `/v2/:endpointId/status/:jobId` -> a regex over a concrete path. */
export function patternToRegex(pattern: string): RegExp {
  let source = '';
  for (const part of pattern.split(/(:[A-Za-z0-9_]+|\*)/)) {
    if (part === '*') source += '.*';
    else if (part.startsWith(':')) source += '[^/]+';
    else source += part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}/?$`);
}

export class RouteTable {
  readonly #entries = new Map<string, PatternEntry>();

  add(url: string, method: string | string[]): void {
    let entry = this.#entries.get(url);
    if (!entry) {
      entry = { regex: patternToRegex(url), methods: new Set() };
      this.#entries.set(url, entry);
    }
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m.toUpperCase());
  }

  /** Methods some route accepts on `path` (without its query), sorted. */
  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const entry of this.#entries.values()) {
      if (entry.regex.test(path)) for (const m of entry.methods) methods.add(m);
    }
    return [...methods].sort();
  }
}

/** Collect every route of `app` (call before registering routes); answerNotFound() then answers 404/405 for the rest. */
export function installRouteTable(app: FastifyInstance): RouteTable {
  const table = new RouteTable();
  app.addHook('onRoute', (route: RouteOptions) => table.add(route.url, route.method));
  tables.set(app, table);
  return table;
}

const tables = new WeakMap<FastifyInstance, RouteTable>();

/**
 * Answer 404/405 for the requests no route matches, before their body is read when the
 * body waits for a read slot (see the module doc). Call after the server-wide hooks that
 * must answer those first (the API key's: a request without the key gets its 401 first).
 */
export function answerNotFound(app: FastifyInstance): void {
  const table = tables.get(app);
  if (!table) throw new Error('answerNotFound: installRouteTable(app) first');
  // Encapsulated (no fastify-plugin): the hook is the not-found handler's alone, after the inherited ones.
  void app.register(async (scope) => {
    scope.addHook('onRequest', (request, reply, done) => {
      if (!waitsForBodySlot(request.raw) || overBodyLimit(request)) return done();
      done(notFound(table, request, (name, value) => void reply.header(name, value)));
    });
    scope.setNotFoundHandler(async (request, reply) => {
      throw notFound(table, request, (name, value) => void reply.header(name, value));
    });
  });
}

/** Whether the request declares a body over its route's limit (fastify refuses it 413 without reading it). */
function overBodyLimit(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  const limit = request.routeOptions.bodyLimit;
  return typeof length === 'string' && typeof limit === 'number' && Number(length) > limit;
}

/** 405 SW_METHOD_NOT_ALLOWED (its Allow header set through `header`) when another method matches the path, else 404 SW_ROUTE_NOT_FOUND. */
function notFound(table: RouteTable, request: FastifyRequest, header: (name: string, value: string) => void): ServerlessWorkerError {
  const path = request.url.split('?')[0] ?? request.url;
  const allowed = table.methodsFor(path);
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    header('allow', allowed.join(', '));
    return new ServerlessWorkerError('SW_METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}`, {
      method: request.method,
      path,
      allowed,
    });
  }
  return new ServerlessWorkerError('SW_ROUTE_NOT_FOUND', `No route ${request.method} ${path}`, { method: request.method, path });
}
