/**
 * @module cli/commands/init
 * `serverless-worker init [dir]`: a new worker project that works on its own after
 * `npm install` (see scaffold/write-scaffold.ts and templates/scaffold/).
 */
import { relative } from 'node:path';
import type { Command } from 'commander';
import * as z from 'zod';
import { parseOrThrow } from '../../job/parse.js';

const InitOptionsSchema = z.object({
  stream: z.boolean().default(false),
  force: z.boolean().default(false),
  name: z
    .string()
    .regex(/^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/, { error: 'must be a valid npm package name (lower case)' })
    .max(214)
    .optional(),
});

const HELP_AFTER = `
Writes package.json (type module; serverless-worker and zod as dependencies; scripts
dev, dry-run, test, build, start), tsconfig.json (NodeNext), src/handler.ts (zod
input + handler + serve() options), src/worker.ts (the entry point), test_input.json,
test/handler.test.ts (node:test with serverless-worker/testing), a Dockerfile for
NVIDIA, AMD and CPU bases (BASE_IMAGE build argument), .dockerignore, .gitignore,
.github/workflows/ci.yml and a README. Then:

  cd <dir> && npm install && npm run dry-run`;

/** Register `init` on the program. */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('Create a new worker project (TypeScript, zod input, tests, Dockerfile, CI) in dir')
    .argument('[dir]', 'folder to create the project in', '.')
    .option('--stream', 'a streaming handler (async generator) instead of one result')
    .option('--name <name>', 'package name (default: the folder name)')
    .option('--force', 'overwrite files that exist already')
    .addHelpText('after', HELP_AFTER)
    .action(async (dir: string, raw: unknown) => {
      const options = parseOrThrow(InitOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'init options');
      const { writeScaffold } = await import('../../scaffold/write-scaffold.js');
      const result = await writeScaffold({ dir, stream: options.stream, force: options.force, ...(options.name ? { name: options.name } : {}) });
      const where = relative(process.cwd(), result.dir) || '.';
      const lines = [
        `Created ${result.name} in ${where}${options.stream ? ' (streaming handler)' : ''}:`,
        ...result.files.map((file) => `  ${file}`),
        '',
        'Next:',
        ...(where === '.' ? [] : [`  cd ${where}`]),
        '  npm install',
        '  npm run dry-run   # test_input.json through the worker',
        '  npm test',
        '  npm run build     # dist/worker.js for the image (see Dockerfile)',
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
