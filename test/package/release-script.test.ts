/**
 * scripts/check-release-version.ts as the release workflow runs it (`npx tsx ...` with the
 * tag): exit 1 and every problem on stderr for a tag of another version, exit 0 and the
 * CHANGELOG.md section written to `--notes` for the current one, exit 2 and the usage with
 * no tag. What it checks, case by case: release.unit.test.ts.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { changelogSection, readReleaseFiles } from '../../scripts/check-release-version.js';
import { REPO_ROOT } from '../child-process.js';

const scratch = await mkdtemp(join(tmpdir(), 'sw-release-'));
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const files = readReleaseFiles();
const { version } = files.sdk as { version: string };

function check(...args: string[]) {
  return execa('npx', ['tsx', 'scripts/check-release-version.ts', ...args], { cwd: REPO_ROOT, reject: false, timeout: 60_000 });
}

describe('scripts/check-release-version.ts, the command', { timeout: 120_000 }, () => {
  it('exits 1 on a tag of another version, saying why on stderr', async () => {
    const run = await check('v9.9.9');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('cannot release v9.9.9:');
    expect(run.stderr).toContain(`package.json (serverless-worker) is at ${version}: bump both packages to 9.9.9 or tag v${version}`);
    expect(run.stdout).toBe('');
  });

  it("exits 0 on the current version's tag and writes that version's notes", async () => {
    const notes = join(scratch, 'notes.md');
    const run = await check(`v${version}`, '--notes', notes);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await readFile(notes, 'utf8')).toBe(`${changelogSection(files.changelog, version)}\n`);
  });

  it('exits 2 with the usage when no tag is given', async () => {
    const run = await check();
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('usage: npx tsx scripts/check-release-version.ts v<version>');
  });
});
