/**
 * @module harness/webhooks
 * Job webhooks: delivery with retries, and the binding to the harness's jobs.
 * Layer: harness feature (docs/architecture.md): uses the core and the store.
 */
export * from './bind-webhooks.js';
export * from './webhook-sender.js';
