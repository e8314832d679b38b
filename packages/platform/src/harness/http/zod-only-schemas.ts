/**
 * @module harness/http/zod-only-schemas
 * fastify's schema compilers, replaced by ones that refuse: every route of the harness reads its
 * parameters, query and body with zod (route-spec.ts, parseInput) and answers plain JSON, so no
 * route hands fastify a JSON schema. Left to its defaults, fastify loads Ajv and
 * fast-json-stringify as the instance is made (about 110 modules: a bare instance took 230 ms
 * of CPU against 160 without them, and a harness start 2-4 MiB more PSS, on the 2-core machine,
 * 2026-12-03) for nothing. A route given a JSON
 * schema fails when it is registered, saying why, instead of being validated by a second library.
 */
import type { FastifyServerOptions } from 'fastify';

function refuse(): never {
  throw new Error('fastify JSON schemas are not compiled by the harness: its routes validate with zod (harness/http/route-spec.ts)');
}

/** fastify's `schemaController` option: compilers that refuse any JSON schema a route is given. */
export const ZOD_ONLY_SCHEMAS: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: { buildValidator: refuse, buildSerializer: refuse },
};
