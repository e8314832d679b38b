/**
 * @module worker/error-payload
 * Anything a handler throws (an Error, a string, undefined, an object) becomes the
 * structured error payload of a failed job.
 */
import { hostname } from 'node:os';
import { isServerlessWorkerError, previewValue, type JobErrorPayload } from '../job/index.js';
import { RUNTIME_VERSION } from '../version.js';

export interface ErrorOrigin {
  workerId: string;
  host?: string;
}

/** The host name reported in error payloads: RUNPOD_POD_HOSTNAME, else the OS host name. */
export function reportedHostname(env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNPOD_POD_HOSTNAME || hostname();
}

export function toErrorPayload(thrown: unknown, origin: ErrorOrigin): JobErrorPayload {
  const base = { hostname: origin.host ?? reportedHostname(), worker_id: origin.workerId, runtime_version: RUNTIME_VERSION };
  if (thrown instanceof Error) {
    const payload: JobErrorPayload = {
      ...base,
      error_type: thrown.name || thrown.constructor?.name || 'Error',
      error_message: thrown.message,
      error_code: 'SW_HANDLER_ERROR',
      ...(thrown.stack ? { error_traceback: thrown.stack } : {}),
    };
    if (isServerlessWorkerError(thrown)) {
      payload.error_code = thrown.code;
      // Refused input is the caller's mistake, not a crash: the runtime's own frames would only mislead.
      if (thrown.code === 'SW_INPUT_VALIDATION') delete payload.error_traceback;
      if (thrown.details?.issues !== undefined) payload.issues = thrown.details.issues;
    }
    return payload;
  }
  return {
    ...base,
    error_code: 'SW_HANDLER_ERROR',
    error_type: thrown === null ? 'null' : typeof thrown,
    error_message: `Handler threw a non-Error value: ${previewValue(thrown)}`,
  };
}
