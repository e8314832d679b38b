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

const PackAnswer = z.object({ tarball: z.string(), platformTarball: z.string(), sdkDist: z.string(), output: z.string() });

/** The broker's answer: both packages built and packed (once per run). */
async function askBroker(): Promise<PackedPackages> {
  const answer = await request(`${inject('packBrokerUrl')}/pack`, { headersTimeout: 900_000, bodyTimeout: 900_000 });
  const body: unknown = await answer.body.json();
  if (answer.statusCode !== 200) throw new Error(`packing this repository's packages: ${(body as { message?: string }).message ?? JSON.stringify(body)}`);
  return PackAnswer.parse(body);
}

/** Both packages packed, copied into `destination` (made if missing). */
export async function packThisPackage(destination: string): Promise<PackedPackages> {
  const packed = await askBroker();
  await mkdir(destination, { recursive: true });
  const tarball = join(destination, basename(packed.tarball));
  const platformTarball = join(destination, basename(packed.platformTarball));
  await copyFile(packed.tarball, tarball);
  await copyFile(packed.platformTarball, platformTarball);
  return { tarball, platformTarball, sdkDist: packed.sdkDist, output: packed.output };
}

/** The SDK compiled by `tsc -p tsconfig.build.json` (the run's one build, shared): a folder to read, not to write. */
export async function builtSdkDist(): Promise<string> {
  return (await askBroker()).sdkDist;
}
