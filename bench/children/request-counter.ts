/**
 * @module bench/children/request-counter
 * Preloaded (`--import`) into a server process by the serve-api-cost bench: counts the
 * HTTP requests the process's servers receive, by the worker API route they name
 * (job-take, job-done, job-stream, job-stop, ping) or `queue` for the rest, through Node's
 * `http.server.request.start` diagnostics channel, and writes the counts to
 * `$BENCH_REQUEST_COUNT_DIR/<pid>.json` when they change (a 100 ms unref'd timer).
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';

const dir = process.env.BENCH_REQUEST_COUNT_DIR;
if (dir !== undefined && dir !== '') {
  const counts: Record<string, number> = {};
  let changed = false;
  subscribe('http.server.request.start', (message) => {
    const url = (message as { request?: IncomingMessage }).request?.url ?? '';
    const route = /\/(job-take-batch|job-take|job-done|job-stream|job-stop|ping)\//.exec(url)?.[1] ?? 'queue';
    counts[route] = (counts[route] ?? 0) + 1;
    changed = true;
  });
  setInterval(() => {
    if (!changed) return;
    changed = false;
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(counts));
  }, 100).unref();
}
