/**
 * @module cli/commands/build
 * `serverless-worker build <entry>`: bundle a worker into one file for its image
 * (see build/bundle.ts). Exit 0 and one line per file written; 1 with the
 * SW_BUILD_FAILED message otherwise.
 */
import type { Command } from 'commander';
import * as z from 'zod';
import { parseOrThrow } from 'serverless-worker/internal';

const BuildOptionsSchema = z.object({
  outdir: z.string().min(1).default('dist'),
  minify: z.boolean().default(true),
  sourcemap: z.boolean().default(true),
  splitting: z.boolean().default(false),
  fullSourceMap: z.boolean().default(false),
});

const HELP_AFTER = `
Writes <outdir>/<entry name>.js: the worker and everything it imports (this package
included) as one ESM file for Node 22.12+, so the image needs no node_modules; beside it
the source map of your files (sources embedded), the runtime's own thread files and a
{"type":"module"} package.json. Start it with source maps on, so a job's error
traceback names your lines:

  node --enable-source-maps dist/worker.js`;

/** Register `build` on the program. */
export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .description('Bundle a worker (the file that calls serve()) into one file for its image, with esbuild')
    .argument('<entry>', 'the worker entry file, e.g. src/worker.ts')
    .option('--outdir <dir>', 'output folder', 'dist')
    .option('--no-minify', 'keep the bundle readable')
    .option('--no-sourcemap', 'write no source map')
    .option('--full-source-map', 'map every dependency and the runtime too, not only your files (about 33 MiB more RSS under --enable-source-maps)')
    .option('--splitting', 'put code loaded on demand (import()) into chunk files under <outdir>/chunks/ (a folder, not one file; less to parse at start)')
    .addHelpText('after', HELP_AFTER)
    .action(async (entry: string, raw: unknown) => {
      const options = parseOrThrow(BuildOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'build options');
      const { bundleWorker, describeOutput } = await import('../../build/bundle.js');
      const output = await bundleWorker({ entry, ...options });
      process.stdout.write(`${describeOutput(output)}\n`);
    });
}
