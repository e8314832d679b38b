/**
 * @module worker/after-this-turn
 * Run a callback once the current turn of the event loop is over (setImmediate), with the
 * setImmediate this module found when it was loaded. The runtime batches work per turn
 * (held-job reports, slot wake-ups); that is not a timer a test means to control, so a
 * test that installs fake timers afterwards (vi.useFakeTimers, as `serverless-worker/testing`
 * allows) must not freeze the runtime waiting for an immediate nobody advances.
 */
const realSetImmediate = globalThis.setImmediate;

export type TurnHandle = ReturnType<typeof setImmediate>;

export function afterThisTurn(callback: () => void): TurnHandle {
  return realSetImmediate(callback);
}
