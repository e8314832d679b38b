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
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { Plugin } from 'esbuild';

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
        const names = (await readdir(folder)).filter((name) => name.endsWith('.sql')).sort();
        const files = await Promise.all(names.map(async (name) => ({ name, sql: await readFile(join(folder, name), 'utf8') })));
        return {
          contents: `export const readMigrationFiles = async () => ${JSON.stringify(files)};\n`,
          loader: 'js',
          watchFiles: names.map((name) => join(folder, name)),
        };
      });
    },
  };
}
