/**
 * `prebuildFixtures` (test/compiled-fixtures.ts), what `npm test` runs at its start: the
 * fixtures that are missing or stale built in one esbuild build, each fixture's cache entry
 * naming its file in that build's folder, so that `compiledFixture` reuses it instead of
 * building again; a changed fixture alone is built again; a build that fails writes nothing.
 * The fixtures are written for this test under test-artifacts/ (inside the repository, as
 * compiled fixtures must be).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { compiledFixture, prebuildFixtures } from '../compiled-fixtures.js';

const folder = join(REPO_ROOT, 'test-artifacts', `prebuild-${process.pid}-${Date.now()}`, 'fixtures');
const shared = join(folder, 'shared.ts');
const first = join(folder, 'first.ts');
const second = join(folder, 'second.ts');
const broken = join(folder, 'broken.ts');

mkdirSync(folder, { recursive: true });
writeFileSync(shared, "import * as z from 'zod';\nexport const Name = z.string().min(1);\nexport const here = (): string => import.meta.url;\n");
writeFileSync(
  first,
  "import { Name, here } from './shared.js';\nconsole.log(JSON.stringify({ name: Name.parse('first'), shared: here(), own: import.meta.url }));\n",
);
writeFileSync(second, "import { Name } from './shared.js';\nconsole.log(JSON.stringify({ name: Name.parse('second') }));\n");

afterAll(() => {
  rmSync(dirname(folder), { recursive: true, force: true });
});

/** The file a fixture's cache entry names (its current.json), read from the cache folder. */
function cachedFile(fixture: string): string {
  const cache = join(REPO_ROOT, 'test-artifacts', 'compiled-fixtures');
  const name = fixture.split('/').at(-1)?.replace(/\.ts$/, '') ?? '';
  const entries = readdirSync(cache).filter((entry) => entry.startsWith(`${name}-`) && !entry.endsWith('-imported'));
  const files = entries
    .map((entry) => join(cache, entry, 'current.json'))
    .filter((manifest) => existsSync(manifest))
    .map((manifest) => JSON.parse(readFileSync(manifest, 'utf8')) as { file: string; inputs: Array<[string, number, number]> })
    .filter((manifest) => manifest.inputs.some(([input]) => input === fixture))
    .map((manifest) => manifest.file);
  expect(files, `one cache entry for ${fixture}`).toHaveLength(1);
  return files[0] as string;
}

function run(bundle: string): unknown {
  return JSON.parse(execFileSync(process.execPath, ['--enable-source-maps', bundle], { encoding: 'utf8' }));
}

describe('prebuildFixtures', () => {
  it('builds the stale fixtures in one build that compiledFixture then reuses; builds a changed one alone again', async () => {
    expect(await prebuildFixtures([first, second])).toBe(2);
    const firstFile = cachedFile(first);
    const secondFile = cachedFile(second);
    // One build: both bundles in one folder, beside the watchdog thread they may start.
    expect(dirname(firstFile)).toBe(dirname(secondFile));
    expect(existsSync(join(dirname(firstFile), 'watchdog-thread.js'))).toBe(true);
    // Nothing built again: compiledFixture answers the prebuilt file.
    expect(compiledFixture(first)).toBe(firstFile);
    expect(compiledFixture(second)).toBe(secondFile);
    // Each runs, its modules seeing their source URLs (as under tsx, as a fixture built alone).
    expect(run(firstFile)).toEqual({ name: 'first', shared: pathToFileURL(shared).href, own: pathToFileURL(first).href });
    expect(run(secondFile)).toEqual({ name: 'second' });
    // Fresh: nothing to build.
    expect(await prebuildFixtures([first, second])).toBe(0);
    // A change to one fixture's own file makes that one stale, not the other.
    appendFileSync(second, '// changed\n');
    expect(await prebuildFixtures([first, second])).toBe(1);
    expect(cachedFile(first)).toBe(firstFile);
    expect(cachedFile(second)).not.toBe(secondFile);
    // A change to a module both import makes both stale.
    appendFileSync(shared, '// changed\n');
    expect(await prebuildFixtures([first, second])).toBe(2);
  });

  it('writes nothing when the build fails (each fixture is then built on its first ask)', async () => {
    writeFileSync(broken, "import { missing } from './no-such-module.js';\nconsole.log(missing);\n");
    appendFileSync(first, '// changed again\n');
    const before = cachedFile(first);
    await expect(prebuildFixtures([first, broken])).rejects.toThrow();
    expect(cachedFile(first)).toBe(before);
  });
});
