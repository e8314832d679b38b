/**
 * `npm run test:order -- <file-times.json | vitest.json>`: writes test/setup/file-seconds.json
 * (the seconds each test file took, outside the unit tier), test/setup/file-order.ts starts the
 * longest files first from it. Best from the file times .ci/run writes beside its JSON report
 * (test/setup/file-times-reporter.ts: each file's whole time on its worker, imports and hooks
 * included); from a vitest JSON report, each file's first test's start to its last test's end.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FILE_SECONDS_PATH } from '../test/setup/file-order.js';

const FileTimes = z.record(z.string(), z.object({ seconds: z.number() }));
const Report = z.object({
  testResults: z.array(z.object({ name: z.string(), startTime: z.number(), endTime: z.number() })),
});

const reportPath = process.argv[2];
if (reportPath === undefined) {
  console.error(
    'usage: npm run test:order -- <file-times.json | vitest.json> (the file times .ci/run writes, or a JSON report: npm test -- --reporter=json --outputFile.json=<path>)',
  );
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const text: unknown = JSON.parse(readFileSync(reportPath, 'utf8'));
const seconds: Record<string, number> = {};
const times = FileTimes.safeParse(text);
if (times.success) {
  for (const [path, { seconds: whole }] of Object.entries(times.data)) if (!path.endsWith('.unit.test.ts')) seconds[path] = whole;
} else {
  const parsed = Report.safeParse(text);
  if (!parsed.success) {
    console.error(
      `${reportPath} is neither file times ({"<path>": {"seconds": N}}) nor a vitest JSON report (testResults[] with name, startTime, endTime): ${parsed.error.message}`,
    );
    process.exit(2);
  }
  for (const file of parsed.data.testResults) {
    const path = relative(root, file.name).replace(/^.*?(?=test\/)/, '');
    if (path.endsWith('.unit.test.ts')) continue;
    seconds[path] = Math.round((file.endTime - file.startTime) / 100) / 10;
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(FILE_SECONDS_PATH, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/setup/file-seconds.json: ${Object.keys(sorted).length} files`);
