// `npm run build`, after tsc: the .sql migration files under src/ go to the same place
// under dist/ (tsc copies only what it compiles), where each part's migrations/index.js
// reads them at run time (src/harness/postgres/migration-files.ts).
import { cp } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await cp(`${root}src`, `${root}dist`, {
  recursive: true,
  filter: (source) => !/\.[^/\\]+$/.test(source) || source.endsWith('.sql'),
});
