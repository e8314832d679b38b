#!/usr/bin/env node
// The `serverless-worker` command. Installed from npm it runs the compiled CLI
// (dist/cli/main.js); in a clone of the repository, where src/ is present, it runs
// the TypeScript sources through tsx (a dev dependency), so `npx serverless-worker`
// works with no build step and never runs a stale dist/. The platform's commands come from
// serverless-worker-platform (packages/platform in the repository) when it is installed.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  // The repository's tsconfig from any working directory: its paths name the two packages' sources.
  process.env.TSX_TSCONFIG_PATH ??= fileURLToPath(new URL('../tsconfig.json', import.meta.url));
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
