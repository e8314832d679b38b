/**
 * `npm run docs:settings`: write the settings tables (src/cli/settings-reference.ts)
 * into README.md between their `<!-- settings:<name>:start/end -->` markers.
 * `--check`: change nothing, exit 1 when README.md differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsReferenceTables } from '../packages/platform/src/cli/settings-reference.js';
import { replaceMarked } from '../src/settings/reference-table.js';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
let after = before;
for (const [name, table] of Object.entries(settingsReferenceTables())) after = replaceMarked(after, name, table);
if (process.argv.includes('--check')) {
  if (after !== before) {
    process.stderr.write('README.md settings tables are out of date: run npm run docs:settings\n');
    process.exitCode = 1;
  }
} else if (after !== before) {
  writeFileSync(path, after);
  process.stdout.write('README.md: settings tables written\n');
} else {
  process.stdout.write('README.md: settings tables already up to date\n');
}
