/**
 * @module harness/management/schemas/endpoint
 * Endpoints (spec 2.6): create and update inputs and the record the harness answers
 * with. The spec lists the create fields only; defaults, ranges, the update input and
 * the record (with its rolling-release history) are the harness's choices, documented
 * in the README.
 */
import { z } from 'zod';
import { integerIn, nonEmptyString, unknownFieldsError } from './fields.js';

/** Endpoint defaults where the create input leaves a field out. */
export const ENDPOINT_DEFAULTS = {
  gpuTypeIds: [] as string[],
  workersMin: 0,
  workersMax: 3,
  /** Seconds an idle worker is kept before it is stopped. */
  idleTimeout: 5,
} as const;

/** idleTimeout bounds, in seconds. */
export const IDLE_TIMEOUT_S = { min: 1, max: 3600 } as const;

const gpuTypeIds = z
  .array(nonEmptyString('each gpuTypeIds entry', 128), {
    error: 'gpuTypeIds must be an array of GPU type ids in priority order, like ["NVIDIA GeForce RTX 4090"]',
  })
  .refine((list) => new Set(list).size === list.length, {
    error: 'gpuTypeIds must not name the same GPU type twice (the order is the priority)',
  });

const fields = {
  name: nonEmptyString('name', 191),
  templateId: nonEmptyString('templateId', 128),
  gpuTypeIds,
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
 * Endpoint create input. Required: `templateId`. Defaults: name = the template's
 * name, gpuTypeIds [] (required non-empty unless the template is CPU), workersMin 0,
 * workersMax 3, idleTimeout 5 s (1..3600); optional networkVolumeId.
 */
export const EndpointCreateInputSchema = z
  .strictObject(
    {
      name: fields.name.optional(),
      templateId: fields.templateId,
      gpuTypeIds: fields.gpuTypeIds.default(() => []),
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
  {
    name: fields.name.optional(),
    templateId: fields.templateId.optional(),
    gpuTypeIds: fields.gpuTypeIds.optional(),
    workersMin: fields.workersMin.optional(),
    workersMax: fields.workersMax.optional(),
    idleTimeout: fields.idleTimeout.optional(),
    networkVolumeId: fields.networkVolumeId.optional(),
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
