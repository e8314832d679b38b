/**
 * @module transports/platform/heartbeat-thread-source
 * The heartbeat thread's program, as JavaScript text run with `new Worker(source,
 * { eval: true })`. It is text rather than a file because the same package runs as
 * TypeScript under tsx and vitest and as compiled JavaScript in dist/: a worker file
 * path would differ (and need a loader) in each, the text does not. It uses only Node
 * built-ins (worker_threads, node:http and node:https with one keep-alive socket), so
 * it needs no module resolution either. Not the global fetch: fetch loads Node's own
 * copy of undici into the thread, about 8 MB of a worker's idle RSS for one GET every
 * few seconds.
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
const client = url.startsWith('https:') ? require('node:https') : require('node:http');
const agent = new client.Agent({ keepAlive: true, maxSockets: 1 });
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

function ping() {
  const headers = { 'user-agent': 'serverless-worker/' + version, accept: '*/*' };
  if (apiKey) headers.authorization = apiKey;
  return new Promise((resolve) => {
    let settled = false;
    let timer;
    const settle = (failure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) fail(failure);
      else consecutive = 0;
      resolve();
    };
    let request;
    try {
      request = client.get(pingUrl(), { headers, agent }, (response) => {
        response.on('error', (error) => settle({ message: String((error && error.message) || error) }));
        response.on('end', () => {
          const status = response.statusCode;
          settle(status >= 200 && status < 300 ? undefined : { status, message: 'HTTP ' + status });
        });
        response.resume();
      });
    } catch (error) {
      settle({ message: String((error && error.message) || error) });
      return;
    }
    request.on('error', (error) => settle({ message: String((error && error.message) || error) }));
    timer = setTimeout(() => {
      settle({ message: 'no answer within ' + timeoutMs + ' ms' });
      request.destroy();
    }, timeoutMs);
  });
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
    agent.destroy();
    parentPort.close();
  }
});

tick();
`;
