/**
 * @module harness/management/store/ids
 * Random resource ids: lowercase letters and digits, so they sit in URL paths
 * (`/v2/{endpointId}/run`) and hostnames without escaping.
 */
import { randomInt } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Id lengths per resource kind (endpoint ids are longer, as on the platform). */
export const ID_LENGTH = { template: 10, networkVolume: 10, endpoint: 14 } as const;

/** A fresh id of `length` characters that `taken` does not hold. */
export function newId(length: number, taken: (id: string) => boolean): string {
  for (;;) {
    let id = '';
    for (let i = 0; i < length; i += 1) id += ALPHABET[randomInt(ALPHABET.length)];
    if (!taken(id)) return id;
  }
}
