/**
 * @module transports/watchdog
 * The watchdog thread: the platform heartbeat and a deadline watchdog that still acts
 * when a handler blocks the main thread's event loop.
 */
export * from './job-board.js';
export * from './thread-file.js';
export * from './thread-protocol.js';
export * from './watchdog.js';
