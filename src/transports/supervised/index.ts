/**
 * @module transports/supervised
 * The transport of the worker child of `--serve-api`: jobs and results over the IPC
 * channel to its supervisor, heartbeat, watchdog and job-stop over the platform
 * transport's HTTP (supervised-transport.ts). Loaded only when SW_SUPERVISOR_CHANNEL=ipc.
 */
export * from './channel-protocol.js';
export * from './supervisor-link.js';
export * from './supervised-transport.js';
