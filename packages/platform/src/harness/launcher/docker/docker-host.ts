/**
 * @module harness/launcher/docker/docker-host
 * Where the Docker engine listens, as `--docker-host` or DOCKER_HOST names it:
 * `unix:///var/run/docker.sock` (the default), a bare socket path, or `tcp://host:port`
 * (plain HTTP: a TLS engine is not supported). `ssh://` and `npipe://` are refused with
 * what is accepted.
 */
import { ServerlessWorkerError } from 'serverless-worker/internal';

export const DEFAULT_DOCKER_HOST = 'unix:///var/run/docker.sock';

export type DockerHost = { kind: 'unix'; socketPath: string; display: string } | { kind: 'tcp'; origin: string; display: string };

/** `unix:///path`, `/path` or `tcp://host:port` -> where to connect; anything else throws SW_INVALID_OPTIONS. */
export function parseDockerHost(value: string = DEFAULT_DOCKER_HOST): DockerHost {
  const text = value.trim();
  if (text.startsWith('unix://') && text.length > 'unix://'.length) return { kind: 'unix', socketPath: text.slice('unix://'.length), display: text };
  if (text.startsWith('/')) return { kind: 'unix', socketPath: text, display: `unix://${text}` };
  const tcp = /^tcp:\/\/([^/:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\/?$/.exec(text);
  if (tcp && Number(tcp[2]) <= 65_535) return { kind: 'tcp', origin: `http://${tcp[1]}:${tcp[2]}`, display: text };
  throw new ServerlessWorkerError(
    'SW_INVALID_OPTIONS',
    `--docker-host (or DOCKER_HOST) expects unix:///path/to/docker.sock or tcp://host:port (plain HTTP); got ${JSON.stringify(value)}`,
  );
}
