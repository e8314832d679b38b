/**
 * Dockerfile.cpu's build carried out with the host's Node in a scratch folder
 * (execute-build.ts): npm ci, the bundle of the WORKER example, the runtime stage's
 * COPY steps; then the image's entrypoint runs its dry run there, with no
 * node_modules anywhere above it. A broken build step or a bundle that needs files the
 * image lacks fails here. Dockerfile.gpu has the same build stage (dockerfiles.test.ts).
 * Only a real `docker build` proves the base images, useradd, and the Node binary on
 * the GPU bases.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../child-process.js';
import { executeDockerfile } from './execute-build.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'sw-docker-'));

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Only the platform's absence: the dry run must not see a RUNPOD_ variable of the test machine. */
function imageEnv(env: Record<string, string>): Record<string, string | undefined> {
  const clean: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) if (name.startsWith('RUNPOD_')) clean[name] = undefined;
  return { ...clean, ...env, LOG_LEVEL: 'info' };
}

describe('Dockerfile.cpu, carried out', () => {
  it('builds the bundle of the WORKER example and its dry run completes in the runtime stage', async () => {
    const image = await executeDockerfile({
      dockerfile: join(ROOT, 'Dockerfile.cpu'),
      context: ROOT,
      scratch,
      buildArgs: { WORKER: 'examples/stream' },
      // The packages are in the npm cache after the project's own install.
      runEnv: { npm_config_prefer_offline: 'true' },
    });
    for (const step of image.ran) console.log(`[docker-steps] ${step.stage}: ${step.command.slice(0, 60)}... ${step.ms} ms`);
    expect(image.ran.map((step) => step.command)).toEqual([expect.stringContaining('npm ci'), expect.stringContaining('serverless-worker.js build')]);
    expect(image.user).toBe('node');
    expect(existsSync(join(image.workdir, 'dist/worker.js'))).toBe(true);
    expect(existsSync(join(image.workdir, 'dist/worker.js.map'))).toBe(true);
    expect(existsSync(join(image.workdir, 'node_modules'))).toBe(false);
    const [program, ...args] = image.command;
    expect(program).toBe('node');
    const run = await execa(process.execPath, args, { cwd: image.workdir, env: imageEnv(image.env), extendEnv: true, reject: false, timeout: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout) as { stream?: unknown; status?: string }[];
    expect(lines.at(-1)?.status).toBe('COMPLETED');
    // examples/stream: its chunks were printed before the record.
    expect(lines.filter((line) => line.stream !== undefined).length).toBeGreaterThan(1);
  }, 600_000);

});

describe('the executor', { timeout: 120_000 }, () => {
  async function context(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(scratch, 'context-'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  }
  const run = async (dir: string) => executeDockerfile({ dockerfile: join(dir, 'Dockerfile'), context: dir, scratch: await mkdtemp(join(scratch, 'run-')) });

  it('carries out COPY, WORKDIR, ARG and RUN in order in the build stage', async () => {
    const dir = await context({
      Dockerfile: 'ARG WHO=world\nFROM node:20 AS build\nWORKDIR /app\nCOPY a.txt ./\nARG WHO\nRUN cat a.txt > out.txt && echo "$WHO" >> out.txt\nFROM node:20 AS runtime\nWORKDIR /srv\nCOPY --from=build /app/out.txt ./\nRUN useradd x\nENTRYPOINT ["node", "x.js"]\n',
      'a.txt': 'hello\n',
    });
    const image = await run(dir);
    expect(await readFile(join(image.workdir, 'out.txt'), 'utf8')).toBe('hello\nworld\n');
    expect(image.skipped).toEqual([expect.stringContaining('RUN useradd x')]);
    expect(image.command).toEqual(['node', 'x.js']);
  });

  it('fails on a failing RUN, a COPY source that is missing or ignored, and an instruction it does not follow', async () => {
    await expect(run(await context({ Dockerfile: 'FROM node:20 AS build\nRUN exit 3\nFROM node:20 AS runtime\n' }))).rejects.toThrow(/RUN exit 3 exited 3/);
    await expect(run(await context({ Dockerfile: 'FROM node:20 AS build\nCOPY nothing.txt ./\nFROM node:20 AS runtime\n' }))).rejects.toThrow(/no file of the build context matches/);
    await expect(
      run(await context({ Dockerfile: 'FROM node:20 AS build\nCOPY secret.txt ./\nFROM node:20 AS runtime\n', 'secret.txt': 'x', '.dockerignore': 'secret.txt\n' })),
    ).rejects.toThrow(/excluded by \.dockerignore/);
    await expect(run(await context({ Dockerfile: 'FROM node:20 AS build\nHEALTHCHECK CMD true\nFROM node:20 AS runtime\n' }))).rejects.toThrow(/does not follow HEALTHCHECK/);
  });
});
