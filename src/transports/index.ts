/**
 * @module transports
 * The Transport contract and its implementations.
 */
export * from './transport.js';
export * from './in-process/index.js';
