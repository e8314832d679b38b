/**
 * @module settings/launched-worker
 * The variable a harness's launcher gives the worker processes it starts (not its
 * containers, which see another pid namespace): the harness's pid. A worker of this SDK
 * exits once that process is gone (local/supervised-child.ts), so no launched worker
 * outlives a harness that was SIGKILLed and could not stop it.
 */
export const HARNESS_PID_ENV = 'SW_HARNESS_PID';

/**
 * The variable a harness's launcher gives the containers it starts: its silence window,
 * ms. A worker of this SDK exits once its harness has been unreachable (no TCP connection
 * to it) for that long (local/harness-watch.ts): a container cannot see the harness's pid.
 */
export const HARNESS_GONE_AFTER_ENV = 'SW_HARNESS_GONE_AFTER_MS';
