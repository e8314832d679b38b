/**
 * @module harness/queue-api/context
 * What every queue API route group works on.
 */
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import type { LoadBalancing } from '../load-balancing/index.js';
import { type EndpointJobs, type Harness, ServerlessWorkerError } from 'serverless-worker/internal';
import { EndpointParamsSchema, JobParamsSchema, parseRequestPart } from './params.js';
import { plainEndpointId, plainJobParams } from './plain-shapes.js';
import type { QueueRoomReservations } from './early-queue-room.js';

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
  /** Workers the harness runs itself (the launcher): /health counts and GET /logs read them; default none. */
  readonly launchedWorkers?: LaunchedWorkersView | undefined;
  /** The load-balancing endpoints: /health counts their workers; default none. */
  readonly loadBalancing?: LoadBalancing | undefined;
  /** The reservations of declared body sizes (early-queue-room.ts), shared by the submit routes of every prefix; default one of their own. */
  readonly queueRoom?: QueueRoomReservations | undefined;
}

/** The endpoint named in the path (created on first use when the harness auto-creates endpoints). */
export function endpointOf(context: QueueApiContext, params: unknown): EndpointJobs {
  const endpointId = plainEndpointId(params) ?? parseRequestPart(EndpointParamsSchema, params, 'path').endpointId;
  return context.harness.endpoint(endpointId);
}

/** The endpoint named in the path if it exists (Harness.existingEndpoint: never created by a read), with its id. */
export async function existingEndpointOf(context: QueueApiContext, params: unknown): Promise<{ endpointId: string; endpoint: EndpointJobs | undefined }> {
  const endpointId = plainEndpointId(params) ?? parseRequestPart(EndpointParamsSchema, params, 'path').endpointId;
  return { endpointId, endpoint: await context.harness.existingEndpoint(endpointId) };
}

/**
 * The endpoint and job id named in the path. An endpoint that does not exist is not
 * created (a /status on a misspelt id must add nothing): its job is not found.
 */
export async function jobOf(context: QueueApiContext, params: unknown): Promise<{ endpoint: EndpointJobs; jobId: string }> {
  const { endpointId, jobId } = plainJobParams(params) ?? parseRequestPart(JobParamsSchema, params, 'path');
  const endpoint = await context.harness.existingEndpoint(endpointId);
  if (!endpoint) {
    throw new ServerlessWorkerError('SW_JOB_NOT_FOUND', `Job ${jobId} not found: no job was ever sent to endpoint ${endpointId} (check the endpoint id)`, {
      jobId,
      endpointId,
    });
  }
  return { endpoint, jobId };
}
