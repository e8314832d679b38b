/**
 * @module log
 * The pino logger factory and the redaction list.
 * Layer: utility (docs/architecture.md): every layer may use it.
 */
export * from './create-logger.js';
export * from './raw-output.js';
export * from './redact.js';
export * from './url-for-log.js';
