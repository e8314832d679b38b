/**
 * @module harness/server-api
 * The harness over HTTP: the server factory, its routes, rate limits, webhooks.
 */
export * from './http/api-key.js';
export * from './http/bind-address.js';
export * from './http/error-reply.js';
export * from './http/rate-limit/index.js';
export * from './server-options.js';
export * from './server.js';
export { createHarnessServer } from './compose.js';
export * from './server-store.js';
export * from './webhooks/index.js';
export { summarizeJob, type RequestSummary, type RequestsListing } from './queue-api/index.js';
export { SseFramer, openAiErrorBody, type OpenAiErrorBody } from './openai/index.js';
