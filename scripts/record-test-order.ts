/**
 * `npm run test:order -- <vitest.json>`: writes test/setup/file-seconds.json (the seconds each
 * test file took, outside the unit tier) from a vitest JSON report, such as the one .ci/run
 * writes. test/setup/file-order.ts starts the longest files first from it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FILE_SECONDS_PATH } from '../test/setup/file-order.js';

const Report = z.object({
  testResults: z.array(z.object({ name: z.string(), startTime: z.number(), endTime: z.number() })),
});

const reportPath = process.argv[2];
if (reportPath === undefined) {
  console.error('usage: npm run test:order -- <vitest.json> (a JSON report: npm test -- --reporter=json --outputFile.json=<path>)');
  process.exit(2);
}
const parsed = Report.safeParse(JSON.parse(readFileSync(reportPath, 'utf8')));
if (!parsed.success) {
  console.error(`${reportPath} is not a vitest JSON report (expected testResults[] with name, startTime, endTime): ${parsed.error.message}`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const seconds: Record<string, number> = {};
for (const file of parsed.data.testResults) {
  const path = relative(root, file.name).replace(/^.*?(?=test\/)/, '');
  if (path.endsWith('.unit.test.ts')) continue;
  seconds[path] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(FILE_SECONDS_PATH, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/setup/file-seconds.json: ${Object.keys(sorted).length} files`);
