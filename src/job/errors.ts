/**
 * @module job/errors
 * The one error class of serverless-worker. Each instance carries a stable `code`
 * from the registry (error-codes.ts); `details` holds machine-readable context
 * (the field, the allowed range, the value received).
 */
import { errorCodeEntry, type ErrorCode, isKnownErrorCode } from './error-codes.js';

export class ServerlessWorkerError extends Error {
  override readonly name = 'ServerlessWorkerError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    // A code no table has cannot be written (ErrorCode), but a registered table may not be loaded yet: 500 then.
    this.status = errorCodeEntry(code)?.status ?? 500;
    this.details = details;
  }

  /** The JSON body the harness answers with: `{ error: { code, message, details? } }`. */
  toJSON(): { error: { code: ErrorCode; message: string; details?: Readonly<Record<string, unknown>> } } {
    return {
      error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) },
    };
  }
}

/** True for a ServerlessWorkerError, also one that crossed a realm (matched by name and code). */
export function isServerlessWorkerError(value: unknown): value is ServerlessWorkerError {
  if (value instanceof ServerlessWorkerError) return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'ServerlessWorkerError' &&
    typeof (value as { code?: unknown }).code === 'string' &&
    isKnownErrorCode((value as { code: string }).code)
  );
}
