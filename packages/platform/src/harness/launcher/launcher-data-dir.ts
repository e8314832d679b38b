/**
 * @module harness/launcher/launcher-data-dir
 * The harness's data folder, where the docker launcher keeps network volumes
 * (`volumes/<networkVolumeId>`): `--data-dir`, default ~/.serverless-worker/harness.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function defaultHarnessDataDir(): string {
  return join(homedir(), '.serverless-worker', 'harness');
}
