/**
 * The tiers (test/setup/tiers.ts): every test file of the repository is in exactly one,
 * decided by its name; a file that uses the browser's helpers is named for the browser
 * tier, one that builds, packs or installs the packages or builds Docker images for the
 * system tier; vitest.config.ts makes one project of each tier, package.json has its
 * script and CONTRIBUTING.md names it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, matchesGlob, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { ONE_PROJECT_ENV, ONE_PROJECT_NAME, TIERS, setupFilesOf, tier as tierNamed, tierOfFile, type Tier } from './tiers.js';
import config, { oneProject, tierProjects } from '../../vitest.config.js';

const SYSTEM_GLOBS = ['test/**/*.system.test.ts', 'test/docker/**/*.test.ts', 'test/package/**/*.test.ts'];

/** Every `*.test.ts` under test/, relative to the repository root, with `/` separators. */
function testFiles(): string[] {
  return readdirSync(join(REPO_ROOT, 'test'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts') && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** The tiers whose globs take `file`, as vitest reads a project's include and exclude. */
function tiersOf(file: string): Array<Tier['name']> {
  const known = tiersByFile.get(file);
  if (known !== undefined) return known;
  const matches = (globs: readonly string[]) => globs.some((glob) => matchesGlob(file, glob));
  const tiers = TIERS.filter((tier) => matches(tier.include) && !matches(tier.exclude)).map((tier) => tier.name);
  tiersByFile.set(file, tiers);
  return tiers;
}
const tiersByFile = new Map<string, Array<Tier['name']>>();

/**
 * Helpers that tie a file to a tier: importing one (from any folder; with `name`, that name
 * of it) means the file drives the browser, or builds and packs the packages or Docker images.
 */
const MARKERS: ReadonlyArray<{ readonly tier: Tier['name']; readonly module: RegExp; readonly name?: string }> = [
  { tier: 'browser', module: /(^|\/)(dashboard-page|setup\/chromium)\.js$/ },
  { tier: 'browser', module: /(^|\/)dashboard-fixture\.js$/, name: 'launchChromium' },
  { tier: 'browser', module: /^playwright-core$/ },
  { tier: 'system', module: /(^|\/)(pack-this-package|node-lines|build-and-pack|docker-image|use-docker-engine|run-cli)\.js$/ },
];

interface Import {
  readonly specifier: string;
  /** What it imports (`{ a, b }`, `x`, empty for a side-effect import); type-only imports are left out. */
  readonly names: string;
}

function importsOf(source: string): Import[] {
  return [...source.matchAll(/(?:^|\n)\s*import\s+(type\s+)?(?:([^'";]*?)\s+from\s+)?['"]([^'"]+)['"]/g)]
    .filter((match) => match[1] === undefined)
    .map((match) => ({ specifier: match[3] ?? '', names: match[2] ?? '' }));
}

describe('test tiers', () => {
  const files = testFiles();

  it('puts every test file in exactly one tier', () => {
    expect(files.length).toBeGreaterThan(200);
    const wrong = files.map((file) => ({ file, tiers: tiersOf(file) })).filter(({ tiers }) => tiers.length !== 1);
    expect(wrong).toEqual([]);
  });

  it('decides by name: the suffix first, then the folder', () => {
    const examples: Record<string, Tier['name']> = {
      'test/harness/new.unit.test.ts': 'unit',
      'test/package/new.unit.test.ts': 'unit',
      'test/docker/new.unit.test.ts': 'unit',
      'test/ui/new.browser.test.ts': 'browser',
      'test/cli/new.browser.test.ts': 'browser',
      'test/e2e/new.system.test.ts': 'system',
      'test/docker/new.test.ts': 'system',
      'test/docker/engine/new.test.ts': 'system',
      'test/package/registry-journey.test.ts': 'system',
      'test/harness/new.test.ts': 'integration',
      'test/ui/new.test.ts': 'integration',
      'test/new.test.ts': 'integration',
    };
    for (const [file, name] of Object.entries(examples)) expect(tiersOf(file), file).toEqual([name]);
    expect(tiersOf('test/harness/helper.ts')).toEqual([]);
  });

  it('has files in every tier', () => {
    for (const tier of TIERS) expect(files.filter((file) => tiersOf(file)[0] === tier.name).length, tier.name).toBeGreaterThan(0);
  });

  it("names a file that uses the browser's or the system tier's helpers for that tier", () => {
    const misplaced: string[] = [];
    for (const file of files) {
      const tier = tiersOf(file)[0];
      for (const { specifier, names } of importsOf(readFileSync(join(REPO_ROOT, file), 'utf8'))) {
        const marker = MARKERS.find(
          (candidate) => candidate.module.test(specifier) && (candidate.name === undefined || new RegExp(`\\b${candidate.name}\\b`).test(names)),
        );
        if (marker !== undefined && marker.tier !== tier) misplaced.push(`${file} imports ${specifier}: name it *.${marker.tier}.test.ts`);
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('finds the imports the marker check reads', () => {
    const source =
      "import { a, b } from './dashboard-page.js';\nimport type { Page } from 'playwright-core';\nimport './side-effect.js';\nimport x from 'x';\n";
    expect(importsOf(source)).toEqual([
      { specifier: './dashboard-page.js', names: '{ a, b }' },
      { specifier: './side-effect.js', names: '' },
      { specifier: 'x', names: 'x' },
    ]);
  });

  it('makes one vitest project of each tier (vitest.config.ts), and of all four for npm test', () => {
    type Project = { test?: { name?: unknown; include?: unknown; exclude?: unknown; isolate?: unknown; setupFiles?: unknown } };
    const projects = (config.test?.projects ?? []) as Project[];
    // This worker runs under `npm test` (one project) or not (the four): the config says which.
    expect(projects).toEqual(process.env[ONE_PROJECT_ENV] === '1' ? [oneProject] : tierProjects);
    expect(tierProjects.map(({ test }) => [test.name, test.include, test.exclude, test.isolate, test.setupFiles])).toEqual(
      TIERS.map((tier) => [tier.name, tier.include, tier.exclude, tier.isolate, setupFilesOf(tier)]),
    );
    expect(oneProject.test).toMatchObject({
      name: ONE_PROJECT_NAME,
      include: ['test/**/*.unit.test.ts', 'test/**/*.test.ts', 'test/**/*.browser.test.ts', ...SYSTEM_GLOBS],
      exclude: ['**/node_modules/**'],
      isolate: false,
      setupFiles: ['test/setup/unit-tier.ts', 'test/setup/file-cpu.ts', 'test/setup/shared-worker.ts'],
    });
    // Each tier's setup files read the file's tier: every test file has exactly one.
    for (const file of testFiles()) expect(tiersOf(file), file).toEqual([tierOfFile(file)]);
    expect(tierOfFile('test/setup/tiers.unit.test.ts')).toBe('unit');
    expect(tierOfFile(join(REPO_ROOT, 'test/package/registry-journey.test.ts'))).toBe('system');
    expect(tierOfFile('src/index.ts')).toBeUndefined();
  });

  it("shares every tier's workers, putting back after each file the process state it left", () => {
    const shared = TIERS.filter((tier) => !tier.isolate).map((tier) => tier.name);
    expect(shared).toEqual(['unit', 'integration', 'browser', 'system']);
    for (const tier of TIERS) expect(setupFilesOf(tier).includes('test/setup/shared-worker.ts'), tier.name).toBe(!tier.isolate);
    expect(setupFilesOf(tierNamed('unit'))).toEqual(['test/setup/unit-tier.ts', 'test/setup/shared-worker.ts']);
  });

  it('gives each tier its npm script and its line in CONTRIBUTING.md', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const contributing = readFileSync(join(REPO_ROOT, 'CONTRIBUTING.md'), 'utf8');
    for (const tier of TIERS) {
      expect(scripts[`test:${tier.name}`], tier.name).toBe(`vitest run --project ${tier.name}`);
      expect(contributing, tier.name).toContain(`| \`npm run test:${tier.name}\` |`);
    }
  });
});
