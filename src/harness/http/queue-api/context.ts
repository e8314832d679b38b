/**
 * @module harness/http/queue-api/context
 * What every queue API route group works on.
 */
import type { EndpointJobs } from '../../endpoint-jobs.js';
import type { Harness } from '../../harness.js';
import { EndpointParamsSchema, JobParamsSchema, parseRequestPart } from './params.js';
import { plainEndpointId, plainJobParams } from './plain-shapes.js';

export interface QueueApiContext {
  readonly harness: Harness;
  /** Aborts when the server starts closing: long polls answer at once. */
  readonly closing: AbortSignal;
  /** How long GET /stream waits for a chunk when none is unread, ms (overridden by ?wait=). */
  readonly streamWaitMs: number;
  /**
   * Run on /run and /runsync input; throws SW_INPUT_VALIDATION for input the endpoint
   * refuses. Default none: any input. `input` may be a RawJson (a large body's input as
   * text), parsed only where the endpoint has a schema.
   */
  readonly checkInput?: (endpointId: string, input: unknown) => void;
}

/** The endpoint named in the path (created on first use when the harness auto-creates endpoints). */
export function endpointOf(context: QueueApiContext, params: unknown): EndpointJobs {
  const endpointId = plainEndpointId(params) ?? parseRequestPart(EndpointParamsSchema, params, 'path').endpointId;
  return context.harness.endpoint(endpointId);
}

/** The endpoint and job id named in the path. */
export function jobOf(context: QueueApiContext, params: unknown): { endpoint: EndpointJobs; jobId: string } {
  const { endpointId, jobId } = plainJobParams(params) ?? parseRequestPart(JobParamsSchema, params, 'path');
  return { endpoint: context.harness.endpoint(endpointId), jobId };
}
