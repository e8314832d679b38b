/**
 * The GitHub workflows say what CONTRIBUTING.md and the README say (GitHub runs them; no
 * test here can): ci.yml runs `.ci/run` (`npm ci`, then the README's `npm test`) on push and
 * pull request, on exactly the Node lines the packages claim and test
 * (test/package/supported-node-lines.ts), as root with debootstrap installed; release.yml, on a tag
 * `v*`, checks the tag against both versions first, builds, tests, publishes the SDK before
 * the platform with provenance and the NPM_TOKEN secret, and drafts the release with the
 * notes that check wrote.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as z from 'zod';
import { REPO_ROOT } from '../child-process.js';
import { NODE_LINES } from './supported-node-lines.js';

const Step = z.object({
  name: z.string().optional(),
  uses: z.string().optional(),
  run: z.string().optional(),
  with: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  env: z.record(z.string(), z.string()).optional(),
  'working-directory': z.string().optional(),
});
type Step = z.infer<typeof Step>;
const Workflow = z.object({
  // YAML reads a bare `on:` key as the string "on" (yaml 1.2), and `push:` with nothing after it as null.
  on: z.record(z.string(), z.union([z.null(), z.record(z.string(), z.unknown())])),
  permissions: z.record(z.string(), z.string()).optional(),
  jobs: z.record(
    z.string(),
    z.object({
      'runs-on': z.string(),
      strategy: z.object({ matrix: z.record(z.string(), z.array(z.union([z.number(), z.string()]))) }).optional(),
      steps: z.array(Step),
    }),
  ),
});
type Workflow = z.infer<typeof Workflow>;

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');
const workflow = (path: string): Workflow => Workflow.parse(parse(read(path)));
const onlyJob = (flow: Workflow) => {
  const jobs = Object.values(flow.jobs);
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
};
/** The index of the one step whose `run` matches `pattern`. */
function stepIndex(steps: readonly Step[], pattern: RegExp): number {
  const found = steps.flatMap((step, index) => (pattern.test(step.run ?? '') ? [index] : []));
  expect(found, String(pattern)).toHaveLength(1);
  return found[0]!;
}

describe('.github/workflows/ci.yml', () => {
  const flow = workflow('.github/workflows/ci.yml');
  const job = onlyJob(flow);

  it('runs on every push and pull request', () => {
    expect(Object.keys(flow.on).sort()).toEqual(['pull_request', 'push']);
  });

  it('on each Node line the packages claim and the README names, the oldest at least the engines minimum', () => {
    expect(job.strategy?.matrix.node).toEqual([...NODE_LINES]);
    expect(job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'))?.with?.['node-version']).toBe('${{ matrix.node }}');
    const engines = z.object({ engines: z.object({ node: z.string() }) }).parse(JSON.parse(read('package.json'))).engines.node;
    expect(Number(/^>=(\d+)\./.exec(engines)?.[1])).toBeLessThanOrEqual(NODE_LINES[0]);
    expect(read('README.md')).toContain(`the lines ${NODE_LINES.slice(0, -1).join(', ')} and ${NODE_LINES.at(-1)} are tested`);
  });

  it("runs .ci/run as root, which is npm ci and the README's npm test, after installing debootstrap", () => {
    const ciRun = stepIndex(job.steps, /\.ci\/run/);
    expect(job.steps[ciRun]?.run).toMatch(/^sudo /);
    expect(stepIndex(job.steps, /apt-get install .*debootstrap/)).toBeLessThan(ciRun);
    const script = read('.ci/run');
    expect(script).toMatch(/^npm ci\b/m);
    expect(script).toMatch(/^npm test\b/m);
    expect(read('README.md')).toContain('npm test');
  });
});

describe('.github/workflows/release.yml', () => {
  const flow = workflow('.github/workflows/release.yml');
  const job = onlyJob(flow);
  const { steps } = job;

  it('runs on a tag v*, with the token for provenance and the right to write the release', () => {
    expect(flow.on).toEqual({ push: { tags: ['v*'] } });
    expect(flow.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
  });

  it('checks the tag, then builds and tests, then publishes the SDK and then the platform, then drafts the release', () => {
    const check = stepIndex(steps, /npx tsx scripts\/check-release-version\.ts "\$GITHUB_REF_NAME" --notes /);
    const build = stepIndex(steps, /^npm run build:all$/m);
    const tests = stepIndex(steps, /\.ci\/run/);
    const publishes = steps.flatMap((step, index) => (/npm publish /.test(step.run ?? '') ? [{ step, index }] : []));
    const draft = stepIndex(steps, /gh release create /);
    expect(publishes.map(({ step }) => step['working-directory'])).toEqual([undefined, 'packages/platform']);
    expect(check).toBeLessThan(build);
    expect(build).toBeLessThan(tests);
    expect(tests).toBeLessThan(publishes[0]!.index);
    expect(publishes[1]!.index).toBeLessThan(draft);
    for (const { step } of publishes) {
      expect(step.run).toContain('npm publish --provenance --access public');
      expect(step.env).toEqual({ NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}' });
    }
  });

  it('drafts the release with the notes the version check wrote from CHANGELOG.md', () => {
    const notes = /--notes (\S+)/.exec(steps[stepIndex(steps, /check-release-version/)]?.run ?? '')?.[1];
    const draft = steps[stepIndex(steps, /gh release create /)]?.run ?? '';
    expect(notes).toBeDefined();
    expect(draft).toContain('--draft');
    expect(draft).toContain(`--notes-file ${notes}`);
  });
});
