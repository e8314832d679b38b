/**
 * @module build/sql-migrations-plugin
 * The PostgreSQL migrations in a bundle. Each part of the harness keeps its tables as
 * numbered .sql files that its `migrations/index` module reads from its own folder at
 * run time (harness/postgres/migration-files.ts); a bundle has no such folders beside it,
 * and a bundle can open the PostgreSQL store (a worker file that starts
 * createHarnessServer({ store: 'postgres://…' }) bundles the harness with it). So in a
 * bundle each of this package's `migrations/index` modules is replaced by one that holds
 * its folder's files as text, with the same export.
 */
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { readMigrationFolder } from '../harness/postgres/migration-files.js';

/** The modules replaced: `…/migrations/index.ts` (a clone) or `.js` (installed). */
const MIGRATIONS_INDEX = /[\\/]migrations[\\/]index\.(ts|js)$/;

/** The plugin for this package's files under `packageRoot` (src/ or dist/, ending in a separator or not). */
export function sqlMigrationsPlugin(packageRoot: string): Plugin {
  const root = packageRoot.endsWith(sep) ? packageRoot : `${packageRoot}${sep}`;
  return {
    name: 'serverless-worker-sql-migrations',
    setup(build) {
      build.onLoad({ filter: MIGRATIONS_INDEX }, async (args) => {
        if (!args.path.startsWith(root)) return undefined;
        const folder = dirname(args.path);
        const files = await readMigrationFolder(pathToFileURL(`${folder}${sep}`));
        return {
          contents: `export const readMigrationFiles = async () => ${JSON.stringify(files)};\n`,
          loader: 'js',
          watchFiles: files.map((file) => join(folder, file.name)),
        };
      });
    },
  };
}
