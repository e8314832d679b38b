/**
 * @module harness/management/schemas/template
 * Templates (spec 2.1 to 2.3): the create input with its defaults, the update input
 * (a partial patch that refuses `category` and `isServerless`), and the record.
 */
import * as z from 'zod';
import { absolutePath, boolean, envMap, integerIn, nonEmptyString, portList, refusedOnUpdate, stringList, unknownFieldsError } from './fields.js';

/** Compute categories a template can target. */
export const TEMPLATE_CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** Defaults of the create input (spec 2.2). */
export const TEMPLATE_DEFAULTS = {
  category: 'NVIDIA',
  containerDiskInGb: 50,
  dockerEntrypoint: [] as string[],
  dockerStartCmd: [] as string[],
  env: {} as Record<string, string>,
  isPublic: false,
  isServerless: false,
  ports: ['8888/http', '22/tcp'],
  readme: '',
  volumeInGb: 20,
  volumeMountPath: '/workspace',
} as const;

/** Longest readme the harness keeps: 64 KiB of Markdown. */
const README_MAX_CHARS = 65_536;

/** The fields shared by create and update, none defaulted. */
const templateFields = {
  name: nonEmptyString('name', 191),
  imageName: z
    .string({ error: 'imageName must be a non-empty image reference without spaces, like "ghcr.io/org/worker:1.0"' })
    .regex(/^\S+$/, { error: 'imageName must be a non-empty image reference without spaces, like "ghcr.io/org/worker:1.0"' }),
  containerDiskInGb: integerIn('containerDiskInGb', { min: 1 }, 'GB'),
  containerRegistryAuthId: nonEmptyString('containerRegistryAuthId'),
  dockerEntrypoint: stringList('dockerEntrypoint'),
  dockerStartCmd: stringList('dockerStartCmd'),
  env: envMap('env'),
  isPublic: boolean('isPublic'),
  ports: portList('ports'),
  readme: z.string({ error: 'readme must be a Markdown string' }).max(README_MAX_CHARS, { error: `readme must be at most ${README_MAX_CHARS} characters` }),
  volumeInGb: integerIn('volumeInGb', { min: 0 }, 'GB'),
  volumeMountPath: absolutePath('volumeMountPath'),
};

const category = z.enum(TEMPLATE_CATEGORIES, { error: `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}` });

const createShape = {
  name: templateFields.name,
  imageName: templateFields.imageName,
  category: category.default(TEMPLATE_DEFAULTS.category),
  containerDiskInGb: templateFields.containerDiskInGb.default(TEMPLATE_DEFAULTS.containerDiskInGb),
  containerRegistryAuthId: templateFields.containerRegistryAuthId.optional(),
  dockerEntrypoint: templateFields.dockerEntrypoint.default(() => []),
  dockerStartCmd: templateFields.dockerStartCmd.default(() => []),
  env: templateFields.env.default(() => ({})),
  isPublic: templateFields.isPublic.default(TEMPLATE_DEFAULTS.isPublic),
  // No default here: the store records false, and remembers that it was not sent.
  isServerless: boolean('isServerless').optional(),
  ports: templateFields.ports.default(() => [...TEMPLATE_DEFAULTS.ports]),
  readme: templateFields.readme.default(TEMPLATE_DEFAULTS.readme),
  volumeInGb: templateFields.volumeInGb.default(TEMPLATE_DEFAULTS.volumeInGb),
  volumeMountPath: templateFields.volumeMountPath.default(TEMPLATE_DEFAULTS.volumeMountPath),
};

/**
 * Template create input (spec 2.2). Required: `name`, `imageName`. Defaults:
 * category NVIDIA, containerDiskInGb 50, dockerEntrypoint [], dockerStartCmd [],
 * env {}, isPublic false, isServerless false (a template created without it may still
 * back an endpoint, with a warning), ports ["8888/http", "22/tcp"] (protocols other
 * than http and tcp are kept, with a warning), readme "", volumeInGb 20,
 * volumeMountPath "/workspace". Unknown fields are refused.
 */
export const TemplateCreateInputSchema = z.strictObject(createShape, {
  error: unknownFieldsError('a template', Object.keys(createShape)),
});
/** A template create input as sent (defaults not applied). */
export type TemplateCreateInput = z.input<typeof TemplateCreateInputSchema>;
/** A validated template create input, defaults applied. */
export type TemplateCreate = z.infer<typeof TemplateCreateInputSchema>;

/** Fields an update refuses (spec 2.3). */
export const TEMPLATE_FIELDS_NOT_UPDATABLE = ['category', 'isServerless'] as const;

const updateShape = {
  name: templateFields.name.optional(),
  imageName: templateFields.imageName.optional(),
  containerDiskInGb: templateFields.containerDiskInGb.optional(),
  containerRegistryAuthId: templateFields.containerRegistryAuthId.optional(),
  dockerEntrypoint: templateFields.dockerEntrypoint.optional(),
  dockerStartCmd: templateFields.dockerStartCmd.optional(),
  env: templateFields.env.optional(),
  isPublic: templateFields.isPublic.optional(),
  ports: templateFields.ports.optional(),
  readme: templateFields.readme.optional(),
  volumeInGb: templateFields.volumeInGb.optional(),
  volumeMountPath: templateFields.volumeMountPath.optional(),
  category: refusedOnUpdate('category', 'it is fixed when the template is created; create a new template instead'),
  isServerless: refusedOnUpdate('isServerless', 'it is fixed when the template is created; create a new template instead'),
};

/**
 * Template update input (spec 2.3). Every field optional; a field left out keeps its
 * current value (the spec's update defaults would otherwise reset unsent fields).
 * `category` and `isServerless` are refused.
 */
export const TemplateUpdateInputSchema = z.strictObject(updateShape, {
  error: unknownFieldsError(
    'a template update',
    Object.keys(updateShape).filter((key) => !(TEMPLATE_FIELDS_NOT_UPDATABLE as readonly string[]).includes(key)),
  ),
});
export type TemplateUpdateInput = z.input<typeof TemplateUpdateInputSchema>;
export type TemplateUpdate = z.infer<typeof TemplateUpdateInputSchema>;

/** The template record the harness answers with (spec 2.1), every field present. */
export const TemplateSchema = z.object({
  id: z.string(),
  name: z.string(),
  imageName: z.string(),
  category: z.enum(TEMPLATE_CATEGORIES),
  containerDiskInGb: z.number().int(),
  containerRegistryAuthId: z.string().optional(),
  dockerEntrypoint: z.array(z.string()),
  dockerStartCmd: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  ports: z.array(z.string()),
  readme: z.string(),
  isPublic: z.boolean(),
  /** true only for templates the operator manages; always false in the harness. */
  isPlatform: z.boolean(),
  isServerless: z.boolean(),
  /** Credits earned from the template; always 0 in the harness. */
  earned: z.number(),
  /** Not described by the spec; always 0 in the harness. */
  runtimeInMin: z.number().int(),
  volumeInGb: z.number().int(),
  volumeMountPath: z.string(),
});
export type Template = z.infer<typeof TemplateSchema>;

/**
 * A template as a client reads it from any management API: the spec marks every
 * record field optional, so only `id` is required, and unknown fields pass through.
 */
export const TemplateReplySchema = TemplateSchema.partial().required({ id: true }).loose();
export type TemplateReply = z.infer<typeof TemplateReplySchema>;
