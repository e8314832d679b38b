/**
 * @module harness/openapi/openapi-routes
 * The routes of the document and its viewer, declared once (http/route-spec.ts): the
 * plugin registers from them and the tests' route list is derived from them. /docs and
 * Swagger UI's files need no key (they hold no data: the page asks for the key), the
 * document does.
 */
import { defineRoute } from '../http/route-spec.js';

const base = { prefix: '', tag: 'OpenAPI' } as const;

export const OPENAPI_ROUTES = {
  document: defineRoute({
    ...base,
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document.',
    replyDescription: 'OpenAPI 3.1.',
  }),
  page: defineRoute({
    ...base,
    auth: false,
    method: 'GET',
    path: '/docs',
    operationId: 'docs',
    summary: 'Swagger UI on /openapi.json.',
    replyDescription: 'HTML.',
  }),
  init: defineRoute({
    ...base,
    auth: false,
    method: 'GET',
    path: '/docs/init.js',
    operationId: 'docs_init',
    summary: "The page's script.",
    replyDescription: 'JavaScript.',
  }),
  login: defineRoute({
    ...base,
    auth: false,
    method: 'GET',
    path: '/docs/login.css',
    operationId: 'docs_login',
    summary: "The key prompt's style.",
    replyDescription: 'CSS.',
  }),
  asset: defineRoute({
    ...base,
    auth: false,
    method: 'GET',
    path: '/docs/:file',
    operationId: 'docs_asset',
    summary: "One of Swagger UI's files.",
    replyDescription: 'The file.',
  }),
};

export const OPENAPI_DOCS_ROUTES = Object.freeze(Object.values(OPENAPI_ROUTES));
