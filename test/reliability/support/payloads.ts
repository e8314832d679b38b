/**
 * @module test/reliability/support/payloads
 * Payloads shared by the fixture worker and the tests that check what it produced.
 */

/** 5 MiB of text with a position marker every 10 characters, so that a reordering or a lost part shows. */
export function fiveMegabytes(): string {
  return Array.from({ length: 524_288 }, (_, i) => `${(i % 100_000).toString().padStart(5, '0')}abcde`).join('');
}
