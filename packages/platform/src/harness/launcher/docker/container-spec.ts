/**
 * @module harness/launcher/docker/container-spec
 * The body of the Engine API's container create for one launched worker, a pure
 * function of what the launcher decided, so a test reads exactly what is sent:
 *
 * - the template's image, `dockerEntrypoint` / `dockerStartCmd` (empty: the image's own);
 * - the environment (the template's `env`, the worker API variables, RUNPOD_POD_ID, ...);
 * - `NetworkMode: host`: the harness listens on loopback, and the worker reaches it there;
 *   the template's `ports` are listed as exposed (with host networking they are the host's);
 * - the endpoint's network volume as a bind mount at /runpod-volume;
 * - GPUs: NVIDIA as a device request for exactly the worker's devices (`--gpus
 *   device=0,1`), AMD as the devices /dev/kfd and /dev/dri with the video and render
 *   groups (`--device /dev/kfd --device /dev/dri --group-add video --group-add render`);
 * - labels that tell the harness's containers apart, and the stop grace as `StopTimeout`
 *   (so a `docker stop` by hand waits as long as the launcher does).
 */
import { PORT_SPEC } from '../../management/schemas/fields.js';

/** The serverless network volume's mount path in a worker. */
export const VOLUME_MOUNT_PATH = '/runpod-volume';

export interface ContainerSpecInput {
  image: string;
  /** The template's dockerEntrypoint; [] keeps the image's ENTRYPOINT. */
  entrypoint: readonly string[];
  /** The template's dockerStartCmd; [] keeps the image's CMD. */
  cmd: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** The template's ports, `<port>/<protocol>`. */
  ports: readonly string[];
  labels: Readonly<Record<string, string>>;
  /** The host folder of the endpoint's network volume; none when it has no volume. */
  volumePath?: string | undefined;
  /** The worker's GPUs (device ids: indexes or UUIDs) and their vendor. */
  gpus: readonly string[];
  vendor: 'nvidia' | 'amd' | undefined;
  /** Group ids (or names) an AMD worker joins for /dev/kfd and /dev/dri: the host's video and render groups. */
  gpuGroups: readonly string[];
  /** Seconds between SIGTERM and SIGKILL on a `docker stop`. */
  stopTimeoutSeconds: number;
}

/** The Engine API's container create body for one worker. */
export function containerSpec(input: ContainerSpecInput): Record<string, unknown> {
  const gpus = input.gpus.length > 0 ? input.vendor : undefined;
  return {
    Image: input.image,
    ...(input.entrypoint.length > 0 ? { Entrypoint: [...input.entrypoint] } : {}),
    ...(input.cmd.length > 0 ? { Cmd: [...input.cmd] } : {}),
    Env: Object.entries(containerEnv(input.env, gpus))
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([name, value]) => `${name}=${value}`),
    Labels: { ...input.labels },
    ExposedPorts: exposedPorts(input.ports),
    StopTimeout: input.stopTimeoutSeconds,
    HostConfig: {
      NetworkMode: 'host',
      ...(input.volumePath !== undefined ? { Binds: [`${input.volumePath}:${VOLUME_MOUNT_PATH}`] } : {}),
      ...(gpus === 'nvidia' ? { DeviceRequests: [{ Driver: '', Count: 0, DeviceIDs: [...input.gpus], Capabilities: [['gpu']] }] } : {}),
      ...(gpus === 'amd'
        ? {
            Devices: ['/dev/kfd', '/dev/dri'].map((path) => ({ PathOnHost: path, PathInContainer: path, CgroupPermissions: 'rwm' })),
            GroupAdd: [...input.gpuGroups],
          }
        : {}),
    },
  };
}

/**
 * A worker's variables inside its container. An NVIDIA device request shows the
 * container only its own GPUs, numbered from 0, so the host's indexes in
 * CUDA_VISIBLE_DEVICES would point at devices it does not have: the variable goes.
 * AMD containers see every GPU under /dev/dri, so HIP_VISIBLE_DEVICES (the host's
 * indexes) stays and picks theirs. A worker without GPUs keeps the empty variable,
 * which hides a GPU that a default NVIDIA runtime would show.
 */
function containerEnv(env: Readonly<Record<string, string | undefined>>, gpus: 'nvidia' | 'amd' | undefined): Record<string, string | undefined> {
  if (gpus !== 'nvidia') return { ...env };
  const { CUDA_VISIBLE_DEVICES: _hostIndexes, ...rest } = env;
  return rest;
}

/** `8000/http` and `22/tcp` -> `8000/tcp`, `22/tcp`; `53/udp` stays udp; other names (`22/ssh`) are TCP. */
function exposedPorts(ports: readonly string[]): Record<string, Record<string, never>> {
  const exposed: Record<string, Record<string, never>> = {};
  for (const port of ports) {
    const match = PORT_SPEC.exec(port);
    if (!match) continue;
    exposed[`${match[1]}/${match[2]?.toLowerCase() === 'udp' ? 'udp' : 'tcp'}`] = {};
  }
  return exposed;
}
