/**
 * @module harness/launcher/docker
 * `--launcher docker`: the launcher's workers as containers of the template's image,
 * through the Docker Engine API.
 */
export * from './container-runner.js';
export * from './container-spec.js';
export * from './docker-backend.js';
export * from './docker-engine.js';
export * from './docker-host.js';
export * from './log-frames.js';
