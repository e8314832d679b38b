/**
 * The release workflow's first check (.github/workflows/release.yml): a tag `v<version>`
 * publishes both packages at that version, so the tag is refused unless both package.json
 * files carry that version, the platform depends on exactly that SDK, and CHANGELOG.md has
 * a section for it (the release's notes). With `--notes <file>` that section is written to
 * the file, for `gh release create --notes-file`. test/package/release.unit.test.ts runs
 * the checks; CONTRIBUTING.md ("Releasing") says what a release is.
 *
 *   npx tsx scripts/check-release-version.ts v0.1.0 [--notes <file>]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as z from 'zod';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `v` and a semver version, a pre-release allowed (`v0.2.0-rc.1`); no build metadata (npm drops it). */
const TAG = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/;

const Manifest = z.object({
  name: z.string(),
  version: z.string(),
  dependencies: z.record(z.string(), z.string()).optional(),
});

export interface ReleaseFiles {
  /** The root package.json (the SDK), parsed JSON. */
  readonly sdk: unknown;
  /** packages/platform/package.json, parsed JSON. */
  readonly platform: unknown;
  /** CHANGELOG.md's text. */
  readonly changelog: string;
}

/** The repository's own files. */
export function readReleaseFiles(root = REPO_ROOT): ReleaseFiles {
  const json = (path: string): unknown => JSON.parse(readFileSync(join(root, path), 'utf8'));
  return { sdk: json('package.json'), platform: json('packages/platform/package.json'), changelog: readFileSync(join(root, 'CHANGELOG.md'), 'utf8') };
}

/**
 * The text of CHANGELOG.md's section for `version`: below its heading `## [<version>]`
 * (a date after it allowed) up to the next `## ` heading or the link definitions at the end,
 * trimmed; undefined when there is no such heading.
 */
export function changelogSection(changelog: string, version: string): string | undefined {
  const lines = changelog.split('\n');
  const heading = new RegExp(`^## \\[${version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\](\\s|$)`);
  const start = lines.findIndex((line) => heading.test(line));
  if (start === -1) return undefined;
  const end = lines.findIndex((line, index) => index > start && (line.startsWith('## ') || /^\[[^\]]+\]: /.test(line)));
  return lines
    .slice(start + 1, end === -1 ? undefined : end)
    .join('\n')
    .trim();
}

/** What stops `tag` from being released from these files: one sentence each; empty when it can go. */
export function releaseProblems(tag: string, files: ReleaseFiles): string[] {
  const version = TAG.exec(tag)?.[1];
  if (version === undefined) return [`the tag "${tag}" is not v<version> (v1.2.3, or v1.2.3-rc.1 for a pre-release)`];
  const problems: string[] = [];
  const sdk = Manifest.parse(files.sdk);
  const platform = Manifest.parse(files.platform);
  for (const [expected, manifest, path] of [
    ['serverless-worker', sdk, 'package.json'],
    ['serverless-worker-platform', platform, 'packages/platform/package.json'],
  ] as const) {
    if (manifest.name !== expected) problems.push(`${path} names the package "${manifest.name}", not "${expected}"`);
    if (manifest.version !== version) {
      problems.push(
        `the tag ${tag} releases version ${version}, but ${path} (${manifest.name}) is at ${manifest.version}: bump both packages to ${version} or tag v${manifest.version}`,
      );
    }
  }
  const sdkRange = platform.dependencies?.['serverless-worker'];
  if (sdkRange !== version) {
    problems.push(
      `packages/platform/package.json depends on serverless-worker "${sdkRange ?? '(none)'}", not exactly ${version}: the two are released together`,
    );
  }
  const notes = changelogSection(files.changelog, version);
  if (notes === undefined) problems.push(`CHANGELOG.md has no section "## [${version}]": move the Unreleased entries under it`);
  else if (notes === '') problems.push(`CHANGELOG.md's section "## [${version}]" is empty: it becomes the release's notes`);
  return problems;
}

function main(): void {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { notes: { type: 'string' } } });
  const [tag, ...rest] = positionals;
  if (tag === undefined || rest.length > 0) {
    console.error('usage: npx tsx scripts/check-release-version.ts v<version> [--notes <file>]');
    process.exit(2);
  }
  const files = readReleaseFiles();
  const problems = releaseProblems(tag, files);
  if (problems.length > 0) {
    console.error(`cannot release ${tag}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    process.exit(1);
  }
  const version = tag.slice(1);
  if (values.notes !== undefined) writeFileSync(values.notes, `${changelogSection(files.changelog, version) ?? ''}\n`);
  console.log(`release ${tag}: serverless-worker and serverless-worker-platform at ${version}, CHANGELOG.md has its notes`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
