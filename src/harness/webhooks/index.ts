/**
 * @module harness/webhooks
 * Job webhooks: delivery with retries, and the binding to the harness's jobs.
 */
export * from './bind-webhooks.js';
export * from './webhook-sender.js';
