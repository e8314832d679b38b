/**
 * @module transports
 * The Transport contract and its implementations.
 * Layer: worker side, over the utilities; never imports the harness (docs/architecture.md).
 */
export * from './transport.js';
export * from './in-process/index.js';
