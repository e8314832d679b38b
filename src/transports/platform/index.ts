/**
 * @module transports/platform
 * The platform transport: the real worker protocol over HTTP (worker-protocol.md
 * section 1), with its environment parsing, URL building, retried delivery, job-stop
 * poll and off-thread heartbeat (the watchdog thread, ../watchdog/).
 */
export * from './retryable-status.js';
export * from './create-platform-transport.js';
export * from './deliver.js';
export * from './http-client.js';
export * from './options.js';
export * from './platform-env.js';
export * from './platform-transport.js';
export * from './platform-watchdog.js';
export * from './stop-poller.js';
export * from './take-answer.js';
export * from './unhealthy-report.js';
export * from './urls.js';
