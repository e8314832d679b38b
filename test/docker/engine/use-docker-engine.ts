/**
 * The run's private Docker engine, for tests. API:
 *
 *   const engine = await useDockerEngine();
 *     engine.socketPath      the engine's unix socket (for an Engine API client: undici,
 *                            dockerode, `socketPath` of node:http)
 *     engine.host            `unix://<socketPath>`, for DOCKER_HOST
 *     engine.env             { DOCKER_HOST, DOCKER_CONFIG } for the docker CLI
 *     engine.docker(args, options?)   run the docker CLI against it (execa; rejects on a
 *                            non-zero exit unless options.reject is false). Builds run
 *                            with the legacy builder (no buildx here): pass
 *                            `--network host` to `docker build` and `docker run`, the
 *                            engine has no bridge.
 *     engine.build(dockerfile, context, { tag, args })   docker build --network host with
 *                            --build-arg for each of `args`; answers the tag
 *   const tag = await standInBase('node', 24);   // or 'cuda' | 'rocm'
 *     a stand-in for node:24-bookworm-slim, nvidia/cuda:*-runtime or rocm/dev-ubuntu,
 *     built once per run on the engine (test/docker/engine/stand-in-base.ts says what
 *     each holds); pass it as NODE_IMAGE / BASE_IMAGE build arguments.
 *
 * The engine starts on the first ask (a few seconds) and stops when the run ends
 * (global-setup.ts). It needs root, dockerd and debootstrap: without them every asking
 * test fails saying how to install them.
 */
import { execa, type Options, type Result } from 'execa';
import { inject } from 'vitest';
import * as z from 'zod';
import type { StandInKind } from './stand-in-base.js';

const EngineAnswer = z.object({ socketPath: z.string(), host: z.string() });
const BaseAnswer = z.object({ tag: z.string() });

export interface TestDockerEngine {
  readonly socketPath: string;
  readonly host: string;
  readonly env: Readonly<Record<string, string>>;
  docker(args: readonly string[], options?: Options): Promise<Result>;
  build(dockerfile: string, context: string, options: { tag: string; args?: Record<string, string> }): Promise<string>;
}

async function ask(path: string): Promise<unknown> {
  const answer = await fetch(`${inject('dockerBrokerUrl')}${path}`, { signal: AbortSignal.timeout(600_000) });
  const body: unknown = await answer.json();
  if (!answer.ok) throw new Error(`the test Docker engine: ${(body as { message?: string }).message ?? JSON.stringify(body)}`);
  return body;
}

let engine: Promise<TestDockerEngine> | undefined;

/** The run's engine (started on the first ask). */
export function useDockerEngine(): Promise<TestDockerEngine> {
  engine ??= (async () => {
    const { socketPath, host } = EngineAnswer.parse(await ask('/engine'));
    const env = { DOCKER_HOST: host, DOCKER_BUILDKIT: '0' };
    const docker = (args: readonly string[], options: Options = {}): Promise<Result> =>
      execa('docker', args, { ...options, env: { ...env, ...options.env } }) as Promise<Result>;
    const build: TestDockerEngine['build'] = async (dockerfile, context, options) => {
      const buildArgs = Object.entries(options.args ?? {}).flatMap(([key, value]) => ['--build-arg', `${key}=${value}`]);
      const result = await docker(['build', '--network', 'host', '-f', dockerfile, '-t', options.tag, ...buildArgs, context], { reject: false });
      if (result.exitCode !== 0) {
        throw new Error(
          `docker build -f ${dockerfile} (${options.tag}) failed with exit code ${result.exitCode}:\n${String(result.stdout).slice(-4_000)}\n${String(result.stderr).slice(-4_000)}`,
        );
      }
      return options.tag;
    };
    return { socketPath, host, env, docker, build };
  })();
  engine.catch(() => (engine = undefined));
  return engine;
}

/** A stand-in base image's tag, built once per run. */
export async function standInBase(kind: StandInKind, nodeMajor = 24): Promise<string> {
  return BaseAnswer.parse(await ask(`/base?kind=${kind}&node=${nodeMajor}`)).tag;
}
