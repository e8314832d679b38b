/**
 * This repository's two packages packed (`npm pack`), for the tests that install them as a
 * user does. Built once per test run by test/package/global-setup.ts (build-and-pack.ts),
 * on the first ask: the three files that install the tarballs share one build.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { request } from 'undici';
import { inject } from 'vitest';
import * as z from 'zod';
import type { PackedPackages } from './build-and-pack.js';

export type { PackedPackages } from './build-and-pack.js';

const PackAnswer = z.object({ tarball: z.string(), platformTarball: z.string(), output: z.string() });

/** Both packages packed, copied into `destination` (made if missing). */
export async function packThisPackage(destination: string): Promise<PackedPackages> {
  const answer = await request(`${inject('packBrokerUrl')}/pack`, { headersTimeout: 900_000, bodyTimeout: 900_000 });
  const body: unknown = await answer.body.json();
  if (answer.statusCode !== 200) throw new Error(`packing this repository's packages: ${(body as { message?: string }).message ?? JSON.stringify(body)}`);
  const packed = PackAnswer.parse(body);
  await mkdir(destination, { recursive: true });
  const tarball = join(destination, basename(packed.tarball));
  const platformTarball = join(destination, basename(packed.platformTarball));
  await copyFile(packed.tarball, tarball);
  await copyFile(packed.platformTarball, platformTarball);
  return { tarball, platformTarball, output: packed.output };
}
