/**
 * The two packages move together: one version in both package.json files and both literals
 * (src/version.ts, the platform's platform-version.ts), the platform depending on exactly
 * that version of the SDK, the scaffold asking for the same range of both, and the lockfile
 * recording the workspace at that version.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIME_VERSION } from '../../src/version.js';
import { PLATFORM_VERSION } from '../../packages/platform/src/platform-version.js';
import { REPO_ROOT } from '../child-process.js';

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly workspaces?: string[];
}
const read = (path: string): Manifest => JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as Manifest;

describe('one version for both packages', () => {
  const sdk = read('package.json');
  const platform = read('packages/platform/package.json');

  it('in both package.json files and both version literals', () => {
    expect(sdk.name).toBe('serverless-worker');
    expect(platform.name).toBe('serverless-worker-platform');
    expect(platform.version).toBe(sdk.version);
    expect(RUNTIME_VERSION).toBe(sdk.version);
    expect(PLATFORM_VERSION).toBe(sdk.version);
  });

  it('the platform depends on exactly that SDK; the SDK names the platform only as an optional peer of the same version', () => {
    expect(platform.dependencies?.['serverless-worker']).toBe(sdk.version);
    expect(Object.keys(sdk.dependencies ?? {})).not.toContain('serverless-worker-platform');
    // An optional peer: npm installs it only when asked (an image has the SDK alone), refuses one of another version, and pnpm and Yarn PnP let the SDK resolve it.
    expect(sdk.peerDependencies?.['serverless-worker-platform']).toBe(sdk.version);
    expect(sdk.peerDependenciesMeta?.['serverless-worker-platform']).toEqual({ optional: true });
    expect(sdk.workspaces).toEqual(['packages/*']);
  });

  it('the scaffold asks for the same range of both', () => {
    const scaffold = readFileSync(join(REPO_ROOT, 'templates/scaffold/base/package.json'), 'utf8');
    expect(scaffold).toContain('"serverless-worker": "^{{version}}"');
    expect(scaffold).toContain('"serverless-worker-platform": "^{{version}}"');
  });

  it('the lockfile records the workspace at that version', () => {
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      version: string;
      packages: Record<string, { version?: string; name?: string }>;
    };
    expect(lock.version).toBe(sdk.version);
    expect(lock.packages['packages/platform']).toMatchObject({ name: 'serverless-worker-platform', version: sdk.version });
  });
});
