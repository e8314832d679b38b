/**
 * @module harness/openai/openai-result
 * What a finished job means for an OpenAI caller. COMPLETED: its output is the answer
 * (a generator handler with aggregateStream gives `[answer]`, which is unwrapped; a
 * handler that only streamed gives its chunk outputs). FAILED or CANCELLED: 502
 * SW_OPENAI_JOB_FAILED; TIMED_OUT: 504 SW_OPENAI_JOB_TIMED_OUT; both carry the
 * worker's error payload in `details.jobError`.
 */
import { type JobView, ServerlessWorkerError, type StreamChunk } from 'serverless-worker/internal';

/** The error payload of a job view (JSON text on the platform), as an object when it parses. */
export function jobErrorOf(view: JobView): unknown {
  if (typeof view.error !== 'string') return view.error;
  try {
    return JSON.parse(view.error) as unknown;
  } catch {
    return view.error;
  }
}

function describeJobError(jobError: unknown): string {
  if (typeof jobError === 'object' && jobError !== null) {
    const { error_type: type, error_message: message } = jobError as { error_type?: unknown; error_message?: unknown };
    if (typeof message === 'string') return typeof type === 'string' ? `${type}: ${message}` : message;
  }
  return typeof jobError === 'string' ? jobError : 'no error payload';
}

/** The error for a job that ended other than COMPLETED. */
export function jobEndError(view: JobView): ServerlessWorkerError {
  const jobError = jobErrorOf(view);
  const details = { jobId: view.id, status: view.status, ...(jobError !== undefined ? { jobError } : {}) };
  if (view.status === 'TIMED_OUT') {
    return new ServerlessWorkerError('SW_OPENAI_JOB_TIMED_OUT', `Job ${view.id} behind this request timed out: ${describeJobError(jobError)}`, details);
  }
  if (view.status === 'CANCELLED') {
    return new ServerlessWorkerError('SW_OPENAI_JOB_FAILED', `Job ${view.id} behind this request was cancelled`, details);
  }
  return new ServerlessWorkerError('SW_OPENAI_JOB_FAILED', `Job ${view.id} behind this request failed: ${describeJobError(jobError)}`, details);
}

/** The answer body of a COMPLETED job, or undefined when it left nothing to answer with. */
export function openAiAnswer(output: unknown, chunks: readonly StreamChunk[]): unknown {
  if (Array.isArray(output) && output.length === 1) return output[0];
  if (output !== undefined) return output;
  if (chunks.length === 1) return chunks[0]?.output;
  if (chunks.length > 1) return chunks.map((chunk) => chunk.output);
  return undefined;
}
