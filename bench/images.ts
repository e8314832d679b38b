/**
 * @module bench/images
 * The images: their sizes and the cold start inside a container. Builds Dockerfile.cpu and
 * Dockerfile.gpu (examples/echo) and the scaffold-like recipe on the test kit's stand-in
 * bases (test/docker/engine/: a private dockerd, node:24-bookworm-slim and the CUDA
 * runtime stood in for by Debian bookworm), then prints:
 *
 * - `docker image ls` sizes of the images and their bases;
 * - the dry run: `docker run --rm` spawned to its exit (the container's create, start and
 *   removal included), and the same for a bare `node -e 0` in the same image (the floor);
 * - a platform worker: `docker run -d` spawned to the worker's first job-take request on a
 *   stand-in platform (an HTTP server on 127.0.0.1 answering 204, "no job"), against a bare
 *   `node` in the same image sending one GET to it (the floor);
 *
 * each the median (min-max) of `--runs` runs (default 7), after one warm-up run.
 *
 *   npx tsx bench/images.ts [--runs 7] [--docker-host unix:///path/docker.sock]
 *
 * Needs root, dockerd and debootstrap (as the image tests do). Without --docker-host it
 * starts a private engine and stops it at the end.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { startDockerEngine, type DockerEngine } from '../test/docker/engine/docker-engine.js';
import { standInBuilder } from '../test/docker/engine/stand-in-base.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, 'docker-host': { type: 'string' } } });
const RUNS = Number(values.runs);

const engine: DockerEngine = values['docker-host']
  ? {
      socketPath: values['docker-host'].replace(/^unix:\/\//, ''),
      host: values['docker-host'],
      dir: '',
      env: { DOCKER_HOST: values['docker-host'] },
      stop: () => Promise.resolve(),
    }
  : await startDockerEngine();
const docker = (args: readonly string[]) => execa('docker', args, { env: { ...engine.env, DOCKER_BUILDKIT: '0' } });

function median(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)] as number;
  return `${middle.toFixed(0)} ms (${(sorted[0] as number).toFixed(0)}-${(sorted.at(-1) as number).toFixed(0)})`;
}

async function measure(what: string, once: () => Promise<number>): Promise<string> {
  await once();
  const samples: number[] = [];
  for (let run = 0; run < RUNS; run++) samples.push(await once());
  const line = `| ${what} | ${median(samples)} |`;
  console.log(line);
  return line;
}

/** A stand-in platform: stamps each job-take request, answers 204 to it and 200 to pings. */
async function fakePlatform(): Promise<{ url: string; nextTake: () => Promise<number>; close: () => void }> {
  let waiting: ((at: number) => void) | undefined;
  const server = createServer((request, reply) => {
    if (request.url?.includes('/job-take/')) waiting?.(performance.now());
    waiting = undefined;
    reply.writeHead(request.url?.includes('/job-take/') ? 204 : 200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    nextTake: () => new Promise((resolve) => (waiting = resolve)),
    close: () => server.close(),
  };
}

try {
  const base = standInBuilder(engine);
  const [node, cuda] = [await base('node', 24), await base('cuda')];
  const images = { cpu: 'sw-bench/echo:cpu', gpu: 'sw-bench/echo:gpu' };
  for (const [tag, file, args] of [
    [images.cpu, 'Dockerfile.cpu', ['--build-arg', `NODE_IMAGE=${node}`]],
    [images.gpu, 'Dockerfile.gpu', ['--build-arg', `NODE_IMAGE=${node}`, '--build-arg', `BASE_IMAGE=${cuda}`]],
  ] as const) {
    const started = performance.now();
    await docker(['build', '--network', 'host', '-q', '-f', file, '-t', tag, ...args, ROOT]);
    console.log(`built ${tag} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  console.log('\n| image | size |\n|---|---|');
  const listed = await docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}} {{.Size}}']);
  for (const line of String(listed.stdout)
    .split('\n')
    .filter((entry) => /^sw-(bench|standin)\//.test(entry))
    .sort()) {
    const [name, size] = line.split(' ');
    console.log(`| ${name} | ${size} |`);
  }

  console.log(
    `\nNode ${String((await docker(['run', '--rm', '--entrypoint', 'node', images.cpu, '--version'])).stdout).trim()} in the images, ${RUNS} runs, medians (min-max)\n\n| variant | time |\n|---|---|`,
  );
  for (const [kind, tag] of Object.entries(images)) {
    await measure(`${kind}: dry run, docker run --rm spawned to exit`, async () => {
      const started = performance.now();
      await docker(['run', '--rm', '--network', 'host', tag]);
      return performance.now() - started;
    });
    await measure(`${kind}: bare \`node -e 0\` in the same image, docker run --rm to exit (floor)`, async () => {
      const started = performance.now();
      await docker(['run', '--rm', '--network', 'host', '--entrypoint', 'node', tag, '-e', '0']);
      return performance.now() - started;
    });
  }
  const platform = await fakePlatform();
  const env = (pod: string) => [
    '-e',
    `RUNPOD_WEBHOOK_GET_JOB=${platform.url}/v2/bench/job-take/$ID?`,
    '-e',
    `RUNPOD_WEBHOOK_POST_OUTPUT=${platform.url}/v2/bench/job-done/$RUNPOD_POD_ID/$ID?`,
    '-e',
    `RUNPOD_WEBHOOK_PING=${platform.url}/v2/bench/ping/$RUNPOD_POD_ID`,
    '-e',
    'RUNPOD_ENDPOINT_ID=bench',
    '-e',
    `RUNPOD_POD_ID=${pod}`,
  ];
  for (const [kind, tag] of Object.entries(images)) {
    let run = 0;
    await measure(`${kind}: platform worker, docker run -d spawned to first job-take`, async () => {
      const take = platform.nextTake();
      const started = performance.now();
      const { stdout } = await docker(['run', '-d', '--network', 'host', ...env(`bench-${run++}`), tag]);
      const at = await take;
      await docker(['rm', '-f', String(stdout).trim()]);
      return at - started;
    });
    await measure(`${kind}: bare \`node\` sending one GET, docker run -d to the request (floor)`, async () => {
      const take = platform.nextTake();
      const started = performance.now();
      const { stdout } = await docker([
        'run',
        '-d',
        '--network',
        'host',
        '--entrypoint',
        'node',
        tag,
        '-e',
        `fetch('${platform.url}/v2/bench/job-take/x').catch(()=>{})`,
      ]);
      const at = await take;
      await docker(['rm', '-f', String(stdout).trim()]);
      return at - started;
    });
  }
  platform.close();
} finally {
  await engine.stop();
}
