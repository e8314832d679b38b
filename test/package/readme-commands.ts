/**
 * The commands README.md tells a newcomer to type, read from its `sh` blocks, for the
 * test that types them against a real registry (registry-journey.test.ts) and for the
 * unit test that keeps this list and the README equal (readme-commands.unit.test.ts): the
 * journey runs the Install section's blocks as the README has them, and its checks are
 * written for the commands below, so an edit of either fails the unit tier at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../child-process.js';
import { codeBlocks } from '../docs/markdown-files.js';

/** The Install section's first block: the scaffold, then its install (the `cd` holds for the commands after it). */
export const SCAFFOLD_COMMANDS = ['npx serverless-worker init my-worker', 'cd my-worker && npm install'] as const;

/** The Install section's second block: both packages added to a project that has a package.json. */
export const EXISTING_PROJECT_COMMANDS = [
  'npm install serverless-worker zod',
  'npm pkg set allowScripts.esbuild=true --json',
  'npm install --save-dev serverless-worker-platform',
] as const;

/** The five-minute path's commands the journey runs in the scaffolded project (the image and the deploy need more than npm: other tests). */
export const FIVE_MINUTE_COMMANDS = {
  dryRun: 'npm run dry-run',
  dev: 'npm run dev',
  dryRunInline: `npx tsx src/worker.ts --test-input '{"input": {"prompt": "hi"}}'`,
  test: 'npm test',
  build: 'npm run build',
  start: 'npm start',
} as const;

export function readReadme(): string {
  return readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
}

/** The text of the section under the heading `## <heading>`, up to the next `## ` heading. */
export function readmeSection(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
  if (start === -1) throw new Error(`README.md has no heading "## ${heading}"`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/**
 * The commands of each `sh` block of a section, one per command as a shell reads it: a
 * line ending in `\` joined to the next, a trailing `# comment` (a `#` after white space)
 * and comment-only or blank lines dropped.
 */
export function shCommands(section: string): string[][] {
  return codeBlocks(section)
    .filter((block) => block.lang === 'sh')
    .map((block) =>
      block.code
        .replace(/\\\n\s*/g, '')
        .split('\n')
        .map((line) => line.replace(/\s+#\s.*$/, '').trim())
        .filter((line) => line !== '' && !line.startsWith('#')),
    );
}
