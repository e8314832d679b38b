/**
 * @module harness/openapi/route-operation
 * One OpenAPI operation from one declared route (http/route-spec.ts): its path
 * parameters, query parameters, body and reply as JSON Schema from their zod schemas
 * (z.toJSONSchema), its error answers, and the 401 of a route behind the API key.
 * Records with a name (`replyName`, `bodyName`) go to components.schemas once and are
 * referred to, lists of them included.
 */
import * as z from 'zod';
import type { AnyRouteSpec } from '../http/route-spec.js';

type Schema = Record<string, unknown>;

/** The document's components.schemas, and which zod schema each name stands for. */
export interface NamedSchemas {
  readonly schemas: Record<string, Schema>;
  readonly names: Map<z.ZodType, string>;
}

export interface OperationOptions {
  readonly operationId: string;
  readonly tag: string;
  readonly named: NamedSchemas;
  /** Path parameters the caller fills itself (the queue API's endpointId): left out. */
  readonly fixedParams?: readonly string[];
}

/** zod's own names for string checks it also writes as a `pattern`: no JSON Schema tool knows them. */
const ZOD_ONLY_FORMATS = new Set(['starts_with', 'ends_with', 'includes', 'regex']);

/** Drop what says nothing to a reader: zod's own formats, and the safe-integer bounds every z.int() carries. */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (typeof value !== 'object' || value === null) return value;
  const out: Schema = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'format' && typeof child === 'string' && ZOD_ONLY_FORMATS.has(child)) continue;
    if (key === 'minimum' && child === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && child === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(child);
  }
  return out;
}

/** A zod schema as JSON Schema for the document: what a client sends (`input`) or receives (`output`); no `$schema` (OpenAPI 3.1 sets the dialect). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;
  return tidy(rest) as Schema;
}

const ERROR_BODY = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** `schema` under `name` in components.schemas (once), as a $ref. */
function refTo(named: NamedSchemas, schema: z.ZodType, name: string, io: 'input' | 'output'): Schema {
  if (named.schemas[name] === undefined) named.schemas[name] = jsonSchemaOf(schema, io);
  named.names.set(schema, name);
  return { $ref: `#/components/schemas/${name}` };
}

/** The reply's schema: a $ref for a named record, an array of $refs for a list of them, else inline. */
function replySchema(route: AnyRouteSpec, named: NamedSchemas): Schema | undefined {
  if (route.replyRef !== undefined) return { $ref: `#/components/schemas/${route.replyRef}` };
  const reply = route.reply;
  if (reply === undefined) return undefined;
  if (route.replyName !== undefined) return refTo(named, reply, route.replyName, 'output');
  if (reply instanceof z.ZodArray) {
    const element = reply.element as z.ZodType;
    const name = named.names.get(element);
    if (name !== undefined) return { type: 'array', items: refTo(named, element, name, 'output') };
  }
  return jsonSchemaOf(reply, 'output');
}

/** Learn the names of the routes' records first, so a list met before its record's own route still refers to it. */
export function nameRecords(routes: readonly AnyRouteSpec[], named: NamedSchemas): void {
  for (const route of routes) if (route.reply !== undefined && route.replyName !== undefined) named.names.set(route.reply, route.replyName);
}

/** The fields of a z.object (path parameters, query), else none. */
function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
}

function parameters(route: AnyRouteSpec, fixed: readonly string[]): Schema[] {
  const list: Schema[] = [];
  for (const [name, field] of Object.entries(shapeOf(route.params))) {
    if (fixed.includes(name)) continue;
    list.push({ name, in: 'path', required: true, schema: jsonSchemaOf(field, 'input') });
  }
  const query = route.query;
  if (query !== undefined) {
    // Query values arrive as text; the document shows what each is read as (a whole number, a list of states).
    const required = new Set((jsonSchemaOf(query, 'input').required as string[] | undefined) ?? []);
    for (const [name, field] of Object.entries(shapeOf(query))) {
      const { description, ...schema } = jsonSchemaOf(field, 'output');
      list.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(typeof description === 'string' ? { description } : {}),
        // A list is sent comma-separated: ?status=COMPLETED,FAILED.
        ...(schema.type === 'array' ? { style: 'form', explode: false } : {}),
        schema,
      });
    }
  }
  return list;
}

/** The operation of `route`. */
export function routeOperation(route: AnyRouteSpec, options: OperationOptions): Schema {
  const { named } = options;
  const responses: Schema = {};
  const reply = replySchema(route, named);
  responses[String(route.status)] = {
    description: route.replyDescription,
    ...(reply !== undefined ? { content: { 'application/json': { schema: reply } } } : {}),
  };
  for (const [status, failure] of Object.entries(route.failures)) {
    responses[status] = 'ref' in failure ? { $ref: `#/components/responses/${failure.ref}` } : { description: failure.description, content: ERROR_BODY };
  }
  if (route.auth) responses['401'] = { $ref: '#/components/responses/Unauthorized' };
  const params = parameters(route, options.fixedParams ?? []);
  const body = route.body;
  return {
    tags: [options.tag],
    operationId: options.operationId,
    summary: route.summary,
    ...(route.description !== undefined ? { description: route.description } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body !== undefined
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: route.bodyName !== undefined ? refTo(named, body, route.bodyName, 'input') : jsonSchemaOf(body, 'input') },
            },
          },
        }
      : {}),
    responses,
  };
}
