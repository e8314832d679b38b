/**
 * @module harness/launcher/docker/docker-backend
 * `--launcher docker`: every template's `imageName` runs as containers on a Docker
 * engine, through its API (docker-engine.ts). Each container gets what a process worker
 * gets (container-spec.ts says how each setting maps), its network volume as a folder
 * `<data dir>/volumes/<networkVolumeId>` bound at /runpod-volume, and labels naming this
 * harness: on close it removes its own, and at start it removes those a crashed harness
 * on this host left behind (their harness pid no longer runs). An image the engine does
 * not have is the endpoint's start problem (its unhealthy reason); the harness pulls nothing.
 *
 *     const containers = await DockerBackend.open({ host: parseDockerHost(), dataDir, machineId, logger });
 *     new Launcher({}, { harness, store, logger, containers });
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { HARNESS_GONE_AFTER_ENV, ServerlessWorkerError } from 'serverless-worker/internal';
import type { Endpoint, Template } from '../../management/index.js';
import type { LaunchBackend, WorkerRunner, WorkerStart } from '../launch-backend.js';
import { ContainerRunner } from './container-runner.js';
import { containerSpec } from './container-spec.js';
import { DockerEngine } from './docker-engine.js';
import { processRuns } from '../process-liveness.js';
import type { DockerHost } from './docker-host.js';
const { chmodSync, mkdirSync, readFileSync } = process.getBuiltinModule('node:fs');

/** Labels on every container the harness starts. */
export const LABELS = {
  /** Marks the harness's containers ("launcher"). */
  harness: 'serverless-worker.harness',
  /** The host and pid of the harness that started it: a leftover once that pid is gone. */
  host: 'serverless-worker.harness.host',
  pid: 'serverless-worker.harness.pid',
  /** One launcher's run (a random id): what its close removes. */
  run: 'serverless-worker.harness.run',
  machine: 'serverless-worker.harness.machine-id',
  endpoint: 'serverless-worker.endpoint-id',
  worker: 'serverless-worker.worker-id',
} as const;

/** A Docker image reference: [registry/]path[:tag][@digest], lowercase path. */
const IMAGE_REFERENCE =
  /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[a-z0-9]+:[a-fA-F0-9]{32,})?$/;

export interface DockerBackendOptions {
  host: DockerHost;
  /** The harness's data folder: network volumes are its `volumes/<id>` folders. */
  dataDir: string;
  /** The launcher's machine id, as a label. */
  machineId: string;
  logger: Logger;
  /** Where the host's groups are read (the video and render groups of AMD workers); default /etc/group. */
  groupFile?: string;
}

export class DockerBackend implements LaunchBackend {
  readonly kind = 'docker';
  readonly engine: DockerEngine;
  readonly dataDir: string;
  readonly runId = randomUUID();
  readonly #options: DockerBackendOptions;
  readonly #log: Logger;
  /** Containers created and not yet removed. */
  readonly #containers = new Set<string>();

  constructor(options: DockerBackendOptions) {
    this.#options = options;
    this.engine = new DockerEngine(options.host);
    this.dataDir = options.dataDir;
    this.#log = options.logger.child({ component: 'docker-launcher' });
  }

  /** A backend whose engine answered, with the leftovers of crashed harnesses removed. */
  static async open(options: DockerBackendOptions): Promise<DockerBackend> {
    const backend = new DockerBackend(options);
    try {
      await backend.engine.ping();
    } catch (error) {
      await backend.engine.close();
      throw new ServerlessWorkerError(
        'SW_INVALID_OPTIONS',
        `--launcher docker: ${(error as Error).message}; start the engine, or point --docker-host (or DOCKER_HOST) at it`,
      );
    }
    const removed = await backend.removeLeftovers();
    backend.#log.info(
      { dockerHost: options.host.display, dataDir: options.dataDir, leftoversRemoved: removed },
      `docker launcher: engine at ${options.host.display}, network volumes under ${join(options.dataDir, 'volumes')}${removed.length > 0 ? `; removed ${removed.length} container(s) a crashed harness left: ${removed.join(', ')}` : ''}`,
    );
    return backend;
  }

  runs(): boolean {
    return true;
  }

  runKey(endpoint: Endpoint, template: Template): unknown {
    return [template.dockerEntrypoint, template.dockerStartCmd, template.ports, endpoint.networkVolumeId ?? null];
  }

  async startProblem(template: Template): Promise<string | undefined> {
    const image = template.imageName;
    if (!IMAGE_REFERENCE.test(image))
      return `imageName ${JSON.stringify(image)} is not a Docker image reference (like "me/worker:1" or "ghcr.io/org/worker:1.0")`;
    const id = await this.engine.imageId(image);
    if (id !== undefined) return undefined;
    return `image "${image}" is not on the Docker engine at ${this.engine.host.display}: build it there (docker build -t ${image} .) or pull it; the harness does not pull images`;
  }

  start(start: WorkerStart): WorkerRunner {
    const { endpoint, template } = start;
    const volumePath = endpoint.networkVolumeId !== undefined ? this.#volumeFolder(endpoint.networkVolumeId) : undefined;
    const spec = containerSpec({
      image: template.imageName,
      entrypoint: template.dockerEntrypoint,
      cmd: template.dockerStartCmd,
      // It cannot see the harness's pid: it watches the harness's port instead (local/harness-watch.ts).
      env: { ...start.env, [HARNESS_GONE_AFTER_ENV]: String(start.harnessSilenceMs) },
      ports: template.ports,
      labels: {
        [LABELS.harness]: 'launcher',
        [LABELS.host]: hostname(),
        [LABELS.pid]: String(process.pid),
        [LABELS.run]: this.runId,
        [LABELS.machine]: this.#options.machineId,
        [LABELS.endpoint]: endpoint.id,
        [LABELS.worker]: start.id,
      },
      volumePath,
      gpus: start.gpus,
      vendor: start.gpuVendor,
      gpuGroups: start.gpuVendor === 'amd' ? gpuGroups(this.#readGroups()) : [],
      stopTimeoutSeconds: Math.ceil(start.shutdownDeadlineMs / 1000),
    });
    return new ContainerRunner({
      engine: this.engine,
      name: `serverless-worker-${start.id}-${randomBytes(3).toString('hex')}`.replace(/[^a-zA-Z0-9_.-]/g, '_'),
      spec,
      onLine: start.onLine,
      onCreated: (id) => this.#containers.add(id),
      onRemoved: (id) => this.#containers.delete(id),
    });
  }

  /**
   * Remove the containers of harnesses on this host that no longer run (their pid is
   * gone): what a killed harness left. Answers their names. Containers of live
   * harnesses, and of other hosts sharing the engine, are left alone.
   */
  async removeLeftovers(): Promise<string[]> {
    const removed: string[] = [];
    for (const container of await this.engine.listByLabels([`${LABELS.harness}=launcher`, `${LABELS.host}=${hostname()}`])) {
      const pid = Number(container.Labels?.[LABELS.pid]);
      if (!Number.isInteger(pid) || pid <= 0 || processRuns(pid)) continue;
      try {
        await this.engine.remove(container.Id);
        removed.push(container.Names?.[0]?.replace(/^\//, '') ?? container.Id.slice(0, 12));
      } catch (error) {
        this.#log.warn({ err: error, containerId: container.Id }, 'could not remove a leftover container');
      }
    }
    return removed;
  }

  /** Remove what is left of this run's containers (the launcher stopped its workers first), then close the connections. */
  async close(): Promise<void> {
    try {
      const left = await this.engine.listByLabels([`${LABELS.run}=${this.runId}`]);
      for (const id of new Set([...this.#containers, ...left.map((container) => container.Id)])) {
        await this.engine.remove(id).catch((error: unknown) => this.#log.warn({ err: error, containerId: id }, 'could not remove a container on close'));
      }
    } catch (error) {
      this.#log.warn({ err: error }, "could not list the launcher's containers on close");
    }
    await this.engine.close();
  }

  /** `<data dir>/volumes/<id>`, made on first use, writable by any user (images often run as a non-root user). */
  #volumeFolder(volumeId: string): string {
    const path = join(this.dataDir, 'volumes', volumeId.replace(/[^A-Za-z0-9_-]/g, '_'));
    mkdirSync(path, { recursive: true });
    chmodSync(path, 0o777);
    return path;
  }

  #readGroups(): string {
    try {
      return readFileSync(this.#options.groupFile ?? '/etc/group', 'utf8');
    } catch {
      return '';
    }
  }
}

/**
 * The group ids an AMD worker joins for /dev/kfd and /dev/dri: the host's `video` and
 * `render` groups from /etc/group's text, as numbers (a name would be looked up in
 * the image's own /etc/group, which may lack `render` or give it another id). When the
 * host has neither, `video` by name.
 */
export function gpuGroups(groupFile: string): string[] {
  const ids: string[] = [];
  for (const name of ['video', 'render']) {
    const line = groupFile.split('\n').find((entry) => entry.startsWith(`${name}:`));
    const gid = line?.split(':')[2];
    if (gid !== undefined && /^\d+$/.test(gid)) ids.push(gid);
  }
  return ids.length > 0 ? ids : ['video'];
}
