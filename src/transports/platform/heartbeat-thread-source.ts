/**
 * @module transports/platform/heartbeat-thread-source
 * The heartbeat thread's program, as JavaScript text run with `new Worker(source,
 * { eval: true })`. It is text rather than a file because the same package runs as
 * TypeScript under tsx and vitest and as compiled JavaScript in dist/: a worker file
 * path would differ (and need a loader) in each, the text does not. It uses only Node
 * built-ins (worker_threads, global fetch), so it needs no module resolution either.
 *
 * Messages in: `{type: 'jobs', ids: string[]}` (the jobs in progress) and
 * `{type: 'stop'}`. Messages out: `{type: 'failure', consecutive, status?, message}` per failed ping
 * (the main thread logs and counts them when its event loop is free).
 * workerData: `{url, apiKey?, intervalMs, timeoutMs, version}`.
 *
 * Pings go at fixed times (start + n x interval) so that a slow answer does not push
 * the rhythm back; each is bounded by `timeoutMs`.
 */
export const HEARTBEAT_THREAD_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { url, apiKey, intervalMs, timeoutMs, version } = workerData;
let jobIds = [];
let timer;
let stopped = false;
let next = Date.now();
let consecutive = 0;

function pingUrl() {
  const params = [];
  if (jobIds.length > 0) params.push('job_id=' + encodeURIComponent(jobIds.join(',')));
  params.push('runpod_version=' + encodeURIComponent(version));
  const query = params.join('&');
  if (url.indexOf('?') < 0) return url + '?' + query;
  return url.endsWith('?') || url.endsWith('&') ? url + query : url + '&' + query;
}

function fail(details) {
  consecutive++;
  parentPort.postMessage(Object.assign({ type: 'failure', consecutive }, details));
}

async function ping() {
  const headers = { 'user-agent': 'serverless-worker/' + version };
  if (apiKey) headers.authorization = apiKey;
  try {
    const response = await fetch(pingUrl(), { headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer().catch(() => undefined);
    if (response.ok) consecutive = 0;
    else fail({ status: response.status, message: 'HTTP ' + response.status });
  } catch (error) {
    const cause = error && error.cause && error.cause.message ? ' (' + error.cause.message + ')' : '';
    fail({ message: String((error && error.message) || error) + cause });
  }
}

function tick() {
  if (stopped) return;
  void ping();
  next += intervalMs;
  const now = Date.now();
  // Fell behind (the machine was suspended): start the rhythm again from now, no burst.
  if (next <= now) next = now + intervalMs;
  timer = setTimeout(tick, next - now);
}

parentPort.on('message', (message) => {
  if (message && message.type === 'jobs' && Array.isArray(message.ids)) jobIds = message.ids.map(String);
  else if (message && message.type === 'stop') {
    stopped = true;
    clearTimeout(timer);
    parentPort.close();
  }
});

tick();
`;
