/**
 * An app whose zod is 3 (a forced install beside our zod 4 peer): importing the package
 * fails at once with a message that names the peer dependency and the fix, instead of
 * the first schema's "z.looseObject is not a function". A resolve hook sends the
 * package's `zod` imports to a stub shaped like zod 3 (a `z` without looseObject).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs } from '../child-process.js';

const scratch = await mkdtemp(join(tmpdir(), 'sw-zod3-'));
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function importWithZod(stub: string): Promise<Awaited<ReturnType<typeof runTs>>> {
  const zodStub = join(scratch, `zod-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(zodStub, stub);
  const hooks = join(scratch, `hooks-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier === 'zod') return { url: ${JSON.stringify(pathToFileURL(zodStub).href)}, shortCircuit: true };
  return next(specifier, context);
}\n`,
  );
  const register = join(scratch, `register-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const entry = join(scratch, `entry-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(entry, `await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'src/index.ts')).href)});\nconsole.log('imported');\n`);
  return runTs(entry, [], { env: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` } });
}

describe('the zod peer dependency', { timeout: 60_000 }, () => {
  it('zod 3 installed instead: the import fails naming zod 4 and the install command', async () => {
    const result = await importWithZod('export const z = { object() {}, string() {} };\nexport default z;\n');
    expect(result.exitCode).not.toBe(0);
    expect(String(result.stderr)).toContain('serverless-worker needs zod 4 (peer dependency zod@^4.0.0)');
    expect(String(result.stderr)).toContain('npm install zod@^4');
    expect(String(result.stderr)).not.toContain('looseObject is not a function');
    expect(String(result.stdout)).not.toContain('imported');
  });

  it('the same hook with the real zod 4 imports the package', async () => {
    const real = pathToFileURL(join(REPO_ROOT, 'node_modules/zod/index.js')).href;
    const result = await importWithZod(`export * from ${JSON.stringify(real)};\nexport { default } from ${JSON.stringify(real)};\n`);
    expect(String(result.stderr)).not.toContain('needs zod 4');
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout)).toContain('imported');
  });
});
