/**
 * @module settings/launched-worker
 * The variable a harness's launcher gives the worker processes it starts (not its
 * containers, which see another pid namespace): the harness's pid. A worker of this SDK
 * exits once that process is gone (local/supervised-child.ts), so no launched worker
 * outlives a harness that was SIGKILLed and could not stop it.
 */
export const HARNESS_PID_ENV = 'SW_HARNESS_PID';
