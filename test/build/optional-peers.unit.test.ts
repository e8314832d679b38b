/**
 * The bundler leaves the SDK's optional peers (the AWS SDK of the S3 helpers, pino-pretty) out of a
 * bundle when the worker's project does not install them, and bundles them when it does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingOptionalPeers } from '../../packages/platform/src/build/bundle.js';
import { PRETTY_LOGS_PACKAGE } from '../../src/log/index.js';
import { S3_CLIENT_PACKAGES } from '../../src/s3/index.js';
import { REPO_ROOT } from '../child-process.js';

describe('optional peers in a bundle', () => {
  it('are external where the project lacks them, bundled where it has them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sw-optional-peers-'));
    try {
      await writeFile(join(dir, 'worker.js'), '');
      expect(missingOptionalPeers(join(dir, 'worker.js'))).toEqual([...S3_CLIENT_PACKAGES, PRETTY_LOGS_PACKAGE]);
      // This repository installs them (dev dependencies, for its S3 tests).
      expect(missingOptionalPeers(join(REPO_ROOT, 'examples/echo/worker.ts'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
