/**
 * The platform package ships Swagger UI's files in vendor/swagger-ui/ (copied at pack time by
 * packages/platform/scripts/vendor-swagger-ui.mjs) so that users never install swagger-ui-dist
 * and its telemetry postinstall: the script copies every file /docs serves, and its licence.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCS_ASSETS } from '../../packages/platform/src/harness/openapi/docs-assets.js';
import { REPO_ROOT } from '../child-process.js';

describe('the vendored Swagger UI', () => {
  it('holds every file /docs serves, and the licence', () => {
    const script = readFileSync(join(REPO_ROOT, 'packages/platform/scripts/vendor-swagger-ui.mjs'), 'utf8');
    const list = /const FILES = \[([^\]]*)\]/.exec(script)?.[1] ?? '';
    const copied = [...list.matchAll(/'([^']+)'/g)].map((match) => match[1]);
    expect(copied).toEqual(expect.arrayContaining([...Object.keys(DOCS_ASSETS), 'LICENSE']));
  });

  it('is what users install instead of swagger-ui-dist: a dev dependency only', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/platform/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      files: string[];
    };
    expect(Object.keys(manifest.dependencies)).not.toContain('swagger-ui-dist');
    expect(Object.keys(manifest.devDependencies)).toContain('swagger-ui-dist');
    expect(manifest.files).toContain('vendor');
  });
});
