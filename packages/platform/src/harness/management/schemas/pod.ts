/**
 * @module harness/management/schemas/pod
 * A pod as `GET /pods` shows it. In the harness a pod is a connected worker; the
 * spec shows no Pod record beyond "the public IP and mapped external ports of
 * exposed TCP ports", so the rest of this shape is the harness's choice.
 */
import * as z from 'zod';

export const POD_STATUSES = ['RUNNING', 'EXITED', 'TERMINATED'] as const;

export const PodSchema = z.object({
  /** The worker id. */
  id: z.string(),
  name: z.string(),
  desiredStatus: z.enum(POD_STATUSES),
  /** The endpoint the worker serves, or null for a plain pod. */
  endpointId: z.string().nullable(),
  /** The image the worker runs, when known. */
  imageName: z.string().nullable(),
  /** Public address for exposed TCP ports; null when none. */
  publicIp: z.string().nullable(),
  /** Exposed ports, `<port>/<protocol>`. */
  ports: z.array(z.string()),
  /** Internal TCP port (as a string key) to the public port it is mapped to. */
  portMappings: z.record(z.string(), z.number().int()),
  /** The GPU the worker reported, or null for CPU workers. */
  gpu: z.object({ typeId: z.string(), count: z.number().int() }).nullable(),
  /** Ids of the jobs the worker is running now. */
  jobsInProgress: z.array(z.string()),
  /**
   * What a worker launched by the harness is doing: initializing (started, has not
   * called yet), idle, running (holds a job), stopping (told to stop); absent for
   * workers the harness did not start.
   */
  workerState: z.enum(['initializing', 'idle', 'running', 'stopping']).optional(),
  /** ISO 8601 time the worker connected. */
  createdAt: z.string(),
  /** ISO 8601 time of the worker's last heartbeat or job request, or null. */
  lastSeenAt: z.string().nullable(),
});
export type Pod = z.infer<typeof PodSchema>;

/** A pod as a client reads it: only `id` required, unknown fields passed through. */
export const PodReplySchema = PodSchema.partial().required({ id: true }).loose();
export type PodReply = z.infer<typeof PodReplySchema>;
