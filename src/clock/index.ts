/**
 * @module clock
 * Time and timers for every layer: the Clock (systemClock, ManualClock), sleep and
 * backoff. Depends on nothing else in src/.
 */
export * from './clock.js';
export * from './manual-clock.js';
export * from './sleep.js';
export * from './backoff.js';
