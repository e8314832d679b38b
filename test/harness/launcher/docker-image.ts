/**
 * @module test/harness/launcher/docker-image
 * The image the docker launcher tests run: the platform fixture worker bundled with
 * `serverless-worker build` (real esbuild), copied by a four-line Dockerfile onto the
 * test kit's Node 24 stand-in base, built once per test file on the run's private engine.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DockerBackend, parseDockerHost } from '../../../packages/platform/src/harness/launcher/docker/index.js';
import { REPO_ROOT, runTs } from '../../child-process.js';
import { standInBase, useDockerEngine, type TestDockerEngine } from '../../docker/engine/use-docker-engine.js';

export const WORKER_IMAGE = 'sw-test/launcher-worker:1';
const CLI = join(REPO_ROOT, 'src/cli/main.ts');

/** The fixture's output events arrive as JSON lines on stdout; the worker runs as the image's `node` user. */
const DOCKERFILE = `ARG BASE
FROM \${BASE}
WORKDIR /app
COPY dist/ /app/dist/
USER node
CMD ["node", "dist/platform-worker.js"]
`;

/** The run's engine with WORKER_IMAGE built on it. */
export async function engineWithWorkerImage(): Promise<TestDockerEngine> {
  const engine = await useDockerEngine();
  const base = await standInBase('node', 24);
  const context = await mkdtemp(join(tmpdir(), 'sw-launcher-image-'));
  try {
    const build = await runTs(CLI, ['build', 'test/platform/fixtures/platform-worker.ts', '--outdir', join(context, 'dist')], { timeout: 180_000 });
    if (build.exitCode !== 0) throw new Error(`serverless-worker build failed: ${String(build.stderr)}`);
    await writeFile(join(context, 'Dockerfile'), DOCKERFILE);
    await engine.build(join(context, 'Dockerfile'), context, { tag: WORKER_IMAGE, args: { BASE: base } });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  return engine;
}

/** A docker backend on the test engine, its volumes under `dataDir`. */
export function openBackend(engine: TestDockerEngine, dataDir: string): Promise<DockerBackend> {
  return DockerBackend.open({ host: parseDockerHost(engine.host), dataDir, machineId: 'test-machine', logger: pino({ level: 'warn' }) });
}
