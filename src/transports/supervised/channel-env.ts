/**
 * @module transports/supervised/channel-env
 * How a --serve-api supervisor tells its child to join over the IPC channel: constants only,
 * so that every platform worker can read them at start without loading the channel's
 * schemas (channel-protocol.ts), which only the supervised child needs.
 */

/** The variable the supervisor sets on a child it joins over the IPC channel; its value is SUPERVISED_CHANNEL_IPC. */
export const SUPERVISED_CHANNEL_ENV = 'SW_SUPERVISOR_CHANNEL';
export const SUPERVISED_CHANNEL_IPC = 'ipc';
