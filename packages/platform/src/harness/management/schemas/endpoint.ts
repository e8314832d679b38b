/**
 * @module harness/management/schemas/endpoint
 * Endpoints (spec 2.6): create and update inputs and the record the harness answers
 * with. Fields and defaults follow the platform's public REST reference where the spec
 * is silent; ranges, the update input and the rolling-release history are the
 * harness's choices, documented in the README.
 */
import * as z from 'zod';
import { PodSchema } from './pod.js';
import { boolean, integerIn, nonEmptyString, unknownFieldsError } from './fields.js';

/** Compute types of an endpoint. */
export const COMPUTE_TYPES = ['GPU', 'CPU'] as const;
export type ComputeType = (typeof COMPUTE_TYPES)[number];

/**
 * How the scaler adds workers: QUEUE_DELAY (a job waited longer than scalerValue
 * seconds) or REQUEST_COUNT (about one worker per scalerValue queued or running jobs).
 */
export const SCALER_TYPES = ['QUEUE_DELAY', 'REQUEST_COUNT'] as const;
export type ScalerType = (typeof SCALER_TYPES)[number];

/**
 * Endpoint defaults where the create input leaves a field out, as the platform's REST
 * reference documents them (computeType follows the template: CPU for a CPU template).
 * Empty lists mean "any": any GPU type, data center, CUDA version, CPU flavor.
 */
export const ENDPOINT_DEFAULTS = {
  gpuTypeIds: [] as string[],
  workersMin: 0,
  workersMax: 3,
  /** Seconds an idle worker is kept before it is stopped. */
  idleTimeout: 5,
  scalerType: 'QUEUE_DELAY' as ScalerType,
  scalerValue: 4,
  gpuCount: 1,
  vcpuCount: 2,
  executionTimeoutMs: 600_000,
  flashboot: false,
} as const;

/** idleTimeout bounds, in seconds. */
export const IDLE_TIMEOUT_S = { min: 1, max: 3600 } as const;
/** executionTimeoutMs bounds: 5 s to 7 days (spec 8.1). */
export const ENDPOINT_EXECUTION_TIMEOUT_MS = { min: 5_000, max: 604_800_000 } as const;

const gpuTypeIds = z
  .array(nonEmptyString('each gpuTypeIds entry', 128), {
    error: 'gpuTypeIds must be an array of GPU type ids in priority order, like ["NVIDIA GeForce RTX 4090"]',
  })
  .refine((list) => new Set(list).size === list.length, {
    error: 'gpuTypeIds must not name the same GPU type twice (the order is the priority)',
  });

/** A list of distinct strings each matching `pattern` (`example` in the message). */
function idList(field: string, pattern: RegExp, example: string) {
  const message = `${field} must be an array of distinct strings like ${example}`;
  return z
    .array(z.string({ error: message }).regex(pattern, { error: message }), { error: message })
    .refine((list) => new Set(list).size === list.length, { error: message });
}

const fields = {
  name: nonEmptyString('name', 191),
  templateId: nonEmptyString('templateId', 128),
  computeType: z.enum(COMPUTE_TYPES, { error: `computeType must be one of ${COMPUTE_TYPES.join(', ')}` }),
  gpuTypeIds,
  gpuCount: integerIn('gpuCount', { min: 1, max: 64 }),
  cpuFlavorIds: idList('cpuFlavorIds', /^cpu[0-9]+[a-z]$/, '["cpu3c", "cpu5c"]'),
  vcpuCount: integerIn('vcpuCount', { min: 1, max: 512 }),
  dataCenterIds: idList('dataCenterIds', /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/, '["EU-RO-1", "US-TX-3"]'),
  allowedCudaVersions: idList('allowedCudaVersions', /^[0-9]{1,2}\.[0-9]{1,2}$/, '["12.4", "12.8"]'),
  executionTimeoutMs: integerIn('executionTimeoutMs', ENDPOINT_EXECUTION_TIMEOUT_MS, 'ms'),
  flashboot: boolean('flashboot'),
  scalerType: z.enum(SCALER_TYPES, { error: `scalerType must be one of ${SCALER_TYPES.join(', ')}` }),
  scalerValue: integerIn('scalerValue', { min: 1, max: 1_000_000 }),
  workersMin: integerIn('workersMin', { min: 0 }),
  workersMax: integerIn('workersMax', { min: 0 }),
  idleTimeout: integerIn('idleTimeout', IDLE_TIMEOUT_S, 'seconds'),
  networkVolumeId: nonEmptyString('networkVolumeId', 128),
};
const FIELD_NAMES = Object.keys(fields);

const workersOrdered = {
  error: 'workersMin must not be greater than workersMax',
  path: ['workersMin'],
};

/**
 * Endpoint create input (the platform's documented fields). Required: `templateId`.
 * Defaults: name = the template's name; computeType from the template (CPU for a CPU
 * template, else GPU); gpuTypeIds [] (any GPU type); gpuCount 1; cpuFlavorIds [];
 * vcpuCount 2; dataCenterIds [] (any); allowedCudaVersions [] (any); executionTimeoutMs
 * 600 000 (5 s..7 days); flashboot false; scalerType QUEUE_DELAY; scalerValue 4;
 * workersMin 0; workersMax 3; idleTimeout 5 s (1..3600); optional networkVolumeId.
 */
export const EndpointCreateInputSchema = z
  .strictObject(
    {
      name: fields.name.optional(),
      templateId: fields.templateId,
      computeType: fields.computeType.optional(),
      gpuTypeIds: fields.gpuTypeIds.default(() => []),
      gpuCount: fields.gpuCount.default(ENDPOINT_DEFAULTS.gpuCount),
      cpuFlavorIds: fields.cpuFlavorIds.default(() => []),
      vcpuCount: fields.vcpuCount.default(ENDPOINT_DEFAULTS.vcpuCount),
      dataCenterIds: fields.dataCenterIds.default(() => []),
      allowedCudaVersions: fields.allowedCudaVersions.default(() => []),
      executionTimeoutMs: fields.executionTimeoutMs.default(ENDPOINT_DEFAULTS.executionTimeoutMs),
      flashboot: fields.flashboot.default(ENDPOINT_DEFAULTS.flashboot),
      scalerType: fields.scalerType.default(ENDPOINT_DEFAULTS.scalerType),
      scalerValue: fields.scalerValue.default(ENDPOINT_DEFAULTS.scalerValue),
      workersMin: fields.workersMin.default(ENDPOINT_DEFAULTS.workersMin),
      workersMax: fields.workersMax.default(ENDPOINT_DEFAULTS.workersMax),
      idleTimeout: fields.idleTimeout.default(ENDPOINT_DEFAULTS.idleTimeout),
      networkVolumeId: fields.networkVolumeId.optional(),
    },
    { error: unknownFieldsError('an endpoint', FIELD_NAMES) },
  )
  .refine((input) => input.workersMin <= input.workersMax, workersOrdered);
export type EndpointCreateInput = z.input<typeof EndpointCreateInputSchema>;
export type EndpointCreate = z.infer<typeof EndpointCreateInputSchema>;

/**
 * Endpoint update input: any subset of the create fields; a field left out keeps its
 * value. workersMin <= workersMax is checked against the merged result by the store.
 */
export const EndpointUpdateInputSchema = z.strictObject(
  Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, schema.optional()])) as {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  },
  { error: unknownFieldsError('an endpoint update', FIELD_NAMES) },
);
export type EndpointUpdateInput = z.input<typeof EndpointUpdateInputSchema>;
export type EndpointUpdate = z.infer<typeof EndpointUpdateInputSchema>;

/** Why an endpoint's workers were rolled to a new version. */
export const RELEASE_REASONS = ['created', 'template-update', 'template-change'] as const;

/**
 * One rolling release of an endpoint: `created` (version 1), `template-update` (its
 * template was updated), `template-change` (the endpoint was pointed at another
 * template). `changedFields` names the template fields that changed.
 */
export const EndpointReleaseSchema = z.object({
  version: z.number().int(),
  reason: z.enum(RELEASE_REASONS),
  templateId: z.string(),
  changedFields: z.array(z.string()),
  /** ISO 8601 time of the release. */
  createdAt: z.string(),
});
export type EndpointRelease = z.infer<typeof EndpointReleaseSchema>;

/** The endpoint record the harness answers with. */
export const EndpointSchema = z.object({
  id: z.string(),
  name: z.string(),
  templateId: z.string(),
  /** In priority order: the first available type is allocated, otherwise the next. */
  gpuTypeIds: z.array(z.string()),
  workersMin: z.number().int(),
  workersMax: z.number().int(),
  idleTimeout: z.number().int(),
  networkVolumeId: z.string().optional(),
  computeType: z.enum(COMPUTE_TYPES),
  gpuCount: z.number().int(),
  cpuFlavorIds: z.array(z.string()),
  vcpuCount: z.number().int(),
  dataCenterIds: z.array(z.string()),
  allowedCudaVersions: z.array(z.string()),
  /** Execution timeout of the endpoint's jobs that set no policy.executionTimeout, ms. */
  executionTimeoutMs: z.number().int(),
  flashboot: z.boolean(),
  scalerType: z.enum(SCALER_TYPES),
  scalerValue: z.number().int(),
  /** CPU instance ids (`<flavor>-<vcpus>-<GB>`) of a CPU endpoint; [] for GPU endpoints. */
  instanceIds: z.array(z.string()),
  /** The endpoint's workers now (launched by the harness or joined over the worker API). */
  workers: z.array(PodSchema),
  /** The current release; starts at 1, +1 per rolling release. */
  version: z.number().int(),
  /** Every release, oldest first; the last one is `version`. */
  releases: z.array(EndpointReleaseSchema),
  /** ISO 8601 creation time. */
  createdAt: z.string(),
});
export type Endpoint = z.infer<typeof EndpointSchema>;

/** An endpoint as a client reads it from any management API: only `id` required. */
export const EndpointReplySchema = EndpointSchema.partial().required({ id: true }).loose();
export type EndpointReply = z.infer<typeof EndpointReplySchema>;
