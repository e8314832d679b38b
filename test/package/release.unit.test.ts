/**
 * A release's version checks (scripts/check-release-version.ts, the release workflow's
 * first step): CHANGELOG.md has a section for the packages' current version, so that their
 * tag can be released as they stand, and a tag that names another version, a platform at
 * another version or on another SDK, or a changelog without the version's notes are each
 * refused with a sentence that says what to fix. The command itself (its exit code, the
 * notes file): release-script.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { changelogSection, readReleaseFiles, releaseProblems, type ReleaseFiles } from '../../scripts/check-release-version.js';

const files = readReleaseFiles();
const { version } = files.sdk as { version: string };

/** The repository's files with one manifest changed. */
function withPlatform(change: Record<string, unknown>): ReleaseFiles {
  return { ...files, platform: { ...(files.platform as Record<string, unknown>), ...change } };
}

describe('CHANGELOG.md', () => {
  it("has a section for the packages' current version, with its notes", () => {
    expect(changelogSection(files.changelog, version)).toMatch(/\S/);
  });

  it('keeps an Unreleased section at the top for the next changes', () => {
    expect(files.changelog.split('\n').find((line) => line.startsWith('## '))).toBe('## [Unreleased]');
  });
});

describe('the release version check', () => {
  it('lets the tag of the current version go', () => {
    expect(releaseProblems(`v${version}`, files)).toEqual([]);
  });

  it('refuses a tag that names another version, naming both packages and what to do', () => {
    const problems = releaseProblems('v9.9.9', files);
    expect(problems).toEqual([
      `the tag v9.9.9 releases version 9.9.9, but package.json (serverless-worker) is at ${version}: bump both packages to 9.9.9 or tag v${version}`,
      `the tag v9.9.9 releases version 9.9.9, but packages/platform/package.json (serverless-worker-platform) is at ${version}: bump both packages to 9.9.9 or tag v${version}`,
      `packages/platform/package.json depends on serverless-worker "${version}", not exactly 9.9.9: the two are released together`,
      'CHANGELOG.md has no section "## [9.9.9]": move the Unreleased entries under it',
    ]);
  });

  it('refuses when only the platform lags, or depends on another SDK', () => {
    expect(releaseProblems(`v${version}`, withPlatform({ version: '0.0.9' }))).toEqual([
      `the tag v${version} releases version ${version}, but packages/platform/package.json (serverless-worker-platform) is at 0.0.9: bump both packages to ${version} or tag v0.0.9`,
    ]);
    expect(releaseProblems(`v${version}`, withPlatform({ dependencies: { 'serverless-worker': `^${version}` } }))).toEqual([
      `packages/platform/package.json depends on serverless-worker "^${version}", not exactly ${version}: the two are released together`,
    ]);
  });

  it('refuses a changelog whose section for the version is missing or empty', () => {
    expect(releaseProblems(`v${version}`, { ...files, changelog: '# Changelog\n\n## [Unreleased]\n' })).toEqual([
      `CHANGELOG.md has no section "## [${version}]": move the Unreleased entries under it`,
    ]);
    expect(releaseProblems(`v${version}`, { ...files, changelog: `# Changelog\n\n## [${version}] - 2026-12-01\n\n## [0.0.1]\n\n- x\n` })).toEqual([
      `CHANGELOG.md's section "## [${version}]" is empty: it becomes the release's notes`,
    ]);
  });

  it('refuses a tag that is not v<version>', () => {
    for (const tag of [version, `release-${version}`, 'v1.2', `v${version}+build.5`]) {
      expect(releaseProblems(tag, files)).toEqual([`the tag "${tag}" is not v<version> (v1.2.3, or v1.2.3-rc.1 for a pre-release)`]);
    }
  });

  it("reads a version's section: below its heading (a date allowed), up to the next heading or the link definitions", () => {
    const changelog = [
      '# Changelog',
      '## [Unreleased]',
      '- next',
      '## [1.1.0] - 2026-12-01',
      '### Fixed',
      '- a fix',
      '## [1.0.0]',
      '- first',
      '[1.1.0]: https://example.com/v1.1.0',
    ].join('\n');
    expect(changelogSection(changelog, '1.1.0')).toBe('### Fixed\n- a fix');
    expect(changelogSection(changelog, '1.0.0')).toBe('- first');
    // The dots are dots: 1x0x0 is no heading of 1.0.0.
    expect(changelogSection(changelog.replace('[1.0.0]', '[1x0x0]'), '1.0.0')).toBeUndefined();
  });
});
