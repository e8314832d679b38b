/**
 * @module harness/core/stop-signal
 * What a long poll reads of a cancellation: whether it happened, and a way to hear of
 * it. AbortSignal has this shape; so has the HTTP layer's cheaper per-request signal
 * (http/client-signal.ts), which is why the long polls ask for no more than this.
 */
export interface StopSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
