/**
 * `npm run docs:settings`: write the generated reference tables (scripts/reference-pages.ts:
 * the settings of src/cli/settings-reference.ts and the error codes) into their pages under
 * docs/reference/, between their `<!-- settings:<name>:start/end -->` markers.
 * `--check`: change nothing, exit 1 when a page differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { REFERENCE_PAGES, referenceTables } from './reference-pages.js';
import { replaceMarked } from '../src/settings/reference-table.js';

const tables = referenceTables();
const check = process.argv.includes('--check');
for (const page of new Set(Object.values(REFERENCE_PAGES))) {
  const path = new URL(`../${page}`, import.meta.url);
  const before = readFileSync(path, 'utf8');
  let after = before;
  for (const [name, table] of Object.entries(tables)) if (REFERENCE_PAGES[name] === page) after = replaceMarked(after, name, table);
  if (check) {
    if (after !== before) {
      process.stderr.write(`${page}: generated tables are out of date: run npm run docs:settings\n`);
      process.exitCode = 1;
    }
  } else if (after !== before) {
    writeFileSync(path, after);
    process.stdout.write(`${page}: tables written\n`);
  } else {
    process.stdout.write(`${page}: tables already up to date\n`);
  }
}
