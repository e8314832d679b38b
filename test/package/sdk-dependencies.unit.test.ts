/**
 * Every dependency of the SDK earns its place: each runtime dependency is imported by its
 * sources (src/), each package its sources import is declared (a dependency, or a peer:
 * zod, and the optional ones loaded on first use), and what only a developer's terminal or
 * laptop needs (pretty logs, the platform, the AWS SDK) is an optional peer, not something
 * every image installs. Read from the files' text with TypeScript's pre-processor.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';

interface Manifest {
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const sdk = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) ? [path] : [];
  });
}

/** The package name of a bare specifier (`@scope/name/sub` -> `@scope/name`), or undefined for a relative or node: one. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every package the SDK's sources import (types-only imports included: a .d.ts of the SDK names them too). */
function importedPackages(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles('src')) {
    for (const { fileName } of ts.preProcessFile(readFileSync(join(REPO_ROOT, file), 'utf8'), true, true).importedFiles) {
      const name = packageOf(fileName);
      if (name === undefined || name === 'serverless-worker') continue;
      found.set(name, [...(found.get(name) ?? []), file]);
    }
  }
  return found;
}

describe("the SDK's dependencies", () => {
  const imported = importedPackages();

  it('imports every runtime dependency it declares', () => {
    const unused = Object.keys(sdk.dependencies ?? {}).filter((name) => !imported.has(name));
    expect(unused, 'declared in dependencies but imported by no file of src/: remove it (or move it to the package that uses it)').toEqual([]);
  });

  it('declares every package its sources import, as a dependency or a peer', () => {
    const declared = new Set([...Object.keys(sdk.dependencies ?? {}), ...Object.keys(sdk.peerDependencies ?? {})]);
    const undeclared = [...imported].filter(([name]) => !declared.has(name)).map(([name, files]) => `${name} (${files.join(', ')})`);
    expect(undeclared).toEqual([]);
  });

  it('keeps what only a developer needs optional: pretty logs, the platform, the AWS SDK', () => {
    for (const name of ['pino-pretty', 'serverless-worker-platform', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner']) {
      expect(sdk.dependencies?.[name], `${name} in dependencies`).toBeUndefined();
      expect(sdk.peerDependenciesMeta?.[name], `${name} an optional peer`).toEqual({ optional: true });
    }
  });
});
