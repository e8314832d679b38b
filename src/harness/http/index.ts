/**
 * @module harness/http
 * The harness over HTTP: the server factory, its routes, rate limits, webhooks.
 */
export * from './api-key.js';
export * from './bind-address.js';
export * from './error-reply.js';
export * from './rate-limit/index.js';
export * from './server-options.js';
export * from './server.js';
export * from './server-store.js';
export * from './webhooks/index.js';
export { summarizeJob, type RequestSummary, type RequestsListing } from './queue-api/index.js';
export { SseFramer, openAiErrorBody, type OpenAiErrorBody } from './openai/index.js';
