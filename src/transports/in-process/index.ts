/**
 * @module transports/in-process
 * The in-process transport: the worker and the harness in one process.
 */
export * from './in-process-transport.js';
