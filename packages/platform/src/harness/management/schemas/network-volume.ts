/**
 * @module harness/management/schemas/network-volume
 * Network volumes (spec 2.4): create and update inputs and the record. Size is in GB,
 * 0 to 4000 inclusive; that an update must grow the size depends on the current
 * size, so the store checks it.
 */
import * as z from 'zod';
import { integerIn, nonEmptyString, refusedOnUpdate, unknownFieldsError } from './fields.js';

/** Network volume size bounds in GB (spec 2.4 and 8.1). */
export const NETWORK_VOLUME_SIZE_GB = { min: 0, max: 4000 } as const;

const size = integerIn('size', NETWORK_VOLUME_SIZE_GB, 'GB');

/** Network volume create input: all of dataCenterId, name, size (0..4000 GB) required. */
export const NetworkVolumeCreateInputSchema = z.strictObject(
  {
    dataCenterId: nonEmptyString('dataCenterId', 64),
    name: nonEmptyString('name', 191),
    size,
  },
  { error: unknownFieldsError('a network volume', ['dataCenterId', 'name', 'size']) },
);
export type NetworkVolumeCreateInput = z.input<typeof NetworkVolumeCreateInputSchema>;
export type NetworkVolumeCreate = z.infer<typeof NetworkVolumeCreateInputSchema>;

/** Fields a network volume update refuses. */
export const NETWORK_VOLUME_FIELDS_NOT_UPDATABLE = ['dataCenterId'] as const;

/** Network volume update input: optional name and size; size must exceed the current one. */
export const NetworkVolumeUpdateInputSchema = z.strictObject(
  {
    name: nonEmptyString('name', 191).optional(),
    size: size.optional(),
    dataCenterId: refusedOnUpdate('dataCenterId', 'a volume stays in the data center it was created in'),
  },
  { error: unknownFieldsError('a network volume update', ['name', 'size']) },
);
export type NetworkVolumeUpdateInput = z.input<typeof NetworkVolumeUpdateInputSchema>;
export type NetworkVolumeUpdate = z.infer<typeof NetworkVolumeUpdateInputSchema>;

/** The network volume record: `dataCenterId`, `id`, `name`, `size` (GB). */
export const NetworkVolumeSchema = z.object({
  id: z.string(),
  dataCenterId: z.string(),
  name: z.string(),
  size: z.number().int(),
});
export type NetworkVolume = z.infer<typeof NetworkVolumeSchema>;

/** A network volume as a client reads it: the four fields, unknown fields passed through. */
export const NetworkVolumeReplySchema = NetworkVolumeSchema.loose();
export type NetworkVolumeReply = z.infer<typeof NetworkVolumeReplySchema>;
