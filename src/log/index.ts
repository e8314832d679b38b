/**
 * @module log
 * The pino logger factory and the redaction list.
 */
export * from './create-logger.js';
export * from './redact.js';
export * from './url-for-log.js';
