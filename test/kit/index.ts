/**
 * @module test/kit
 * The tests' kit: bounded polling (poll.ts), loopback ports (ports.ts), a harness in
 * process or as a CLI child process (harness.ts), a worker's `--serve-api` child
 * (serve-api.ts), HTTP calls with clear failures (http.ts) and a webhook receiver
 * (receiver.ts). Child processes themselves: test/child-process.ts.
 */
export { eventually, waitFor, within } from './poll.js';
export { closedPort, freePort } from './ports.js';
export { call, errorCode, fetchOkJson, postJson, type HttpAnswer } from './http.js';
export {
  harnessListening,
  startHarnessProcess,
  startHarnessServer,
  startTestServer,
  type HarnessProcess,
  type HarnessProcessOptions,
  type TestServer,
} from './harness.js';
export { startReceiver, type ReceivedHook, type WebhookReceiver } from './receiver.js';
export { startServeApiProcess, type ServeApiProcess } from './serve-api.js';
