/**
 * @module bench/lib/fake-platform
 * The least a platform can be for a worker (worker-protocol.md section 1), so that a
 * worker's own CPU per job is measured without the harness's cost or its changes in
 * the same figure: one bare `node:http` server on 127.0.0.1 that hands out queued jobs
 * on `job-take` / `job-take-batch` (a long poll while none is queued), answers `{}` to
 * every `job-done` and `job-stream` post, holds `job-stop` polls open and answers 200
 * to pings. No validation, no store: each job is `{"id":"f<n>","input":<input>}`.
 * Result bodies of jobs whose input asked for it (`keep`) are kept for the caller.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { STREAM_BATCH_HEADER, STREAM_ORDER_HEADER, STREAM_ORDER_VALUE } from '../../src/job/stream-order.js';

interface Queued {
  readonly input: string;
  readonly keep: boolean;
  left: number;
}

interface Batch {
  readonly total: number;
  ended: number;
  readonly keep: boolean;
  readonly kept: string[];
  readonly resolve: (kept: string[]) => void;
  readonly ids: Set<string>;
}

export interface FakePlatform {
  /** The RUNPOD_WEBHOOK_* variables that point a worker here. */
  readonly env: Readonly<Record<string, string>>;
  /** Job-take requests answered with jobs so far. */
  readonly takes: number;
  /** job-stream posts received so far (the chunks a streaming worker sent). */
  readonly streamPosts: number;
  /**
   * Queue `count` jobs with `input` and resolve once every one's result was posted;
   * `keep` answers the posted result bodies (for probes).
   */
  run(count: number, input: unknown, keep?: boolean): Promise<string[]>;
  close(): Promise<void>;
}

export interface FakePlatformOptions {
  /**
   * Answer job-take with `x-sw-stream-order: stream_index` and `x-sw-stream-batch: 64`, as
   * our harness does, so that our worker keeps several chunk posts in flight and sends
   * several chunks in a post (it stores no chunk, so any order is kept; a batch is one
   * post, answered like any other).
   */
  readonly streamOrder?: boolean;
}

export async function startFakePlatform(options: FakePlatformOptions = {}): Promise<FakePlatform> {
  const takeHeaders: Record<string, string> = options.streamOrder === true ? { [STREAM_ORDER_HEADER]: STREAM_ORDER_VALUE, [STREAM_BATCH_HEADER]: '64' } : {};
  const queue: Queued[] = [];
  const parked: Array<{ res: ServerResponse; max: number }> = [];
  const stopPolls = new Set<ServerResponse>();
  const batches = new Map<string, Batch>();
  let nextId = 0;
  let batch: Batch | undefined;

  function jobsFor(max: number): string[] {
    const out: string[] = [];
    while (out.length < max && queue.length > 0) {
      const head = queue[0]!;
      const id = `f${nextId++}`;
      batch?.ids.add(id);
      if (batch) batches.set(id, batch);
      out.push(`{"id":"${id}","input":${head.input}}`);
      if (--head.left === 0) queue.shift();
    }
    return out;
  }

  let takes = 0;
  let streamPosts = 0;
  function answerTake(res: ServerResponse, max: number, batched: boolean): void {
    takes++;
    const jobs = jobsFor(max);
    const body = batched ? `[${jobs.join(',')}]` : jobs[0]!;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...takeHeaders });
    res.end(body);
  }

  function wakeParked(): void {
    while (parked.length > 0 && queue.length > 0) {
      const { res, max } = parked.shift()!;
      if (!res.destroyed) answerTake(res, max, max > 1 || res.req.url?.includes('batch') === true);
    }
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    if (req.method === 'GET' && (url.startsWith('/job-take/') || url.startsWith('/job-take-batch/'))) {
      const batched = url.startsWith('/job-take-batch/');
      const max = batched ? Number(/batch_size=(\d+)/.exec(url)?.[1] ?? '1') : 1;
      if (queue.length > 0) answerTake(res, max, batched);
      else parked.push({ res, max });
      return;
    }
    if (req.method === 'GET' && url.startsWith('/job-stop/')) {
      stopPolls.add(res);
      res.once('close', () => stopPolls.delete(res));
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-length': 0 });
      res.end();
      return;
    }
    if (url.startsWith('/job-stream/')) streamPosts++;
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (body += part));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
      res.end('{}');
      if (!url.startsWith('/job-done/')) return;
      const id = decodeURIComponent(url.slice(url.lastIndexOf('/') + 1).split('?')[0] ?? '');
      const owner = batches.get(id);
      if (!owner || body.includes('"IN_PROGRESS"')) return;
      batches.delete(id);
      if (owner.keep) owner.kept.push(body);
      if (++owner.ended === owner.total) owner.resolve(owner.kept);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    env: {
      RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID`,
      RUNPOD_ENDPOINT_ID: 'fake',
    },
    get takes() {
      return takes;
    },
    get streamPosts() {
      return streamPosts;
    },
    run(count, input, keep = false) {
      if (batch) return Promise.reject(new Error('one run at a time'));
      return new Promise<string[]>((resolve) => {
        batch = {
          total: count,
          ended: 0,
          keep,
          kept: [],
          ids: new Set(),
          resolve: (kept) => {
            batch = undefined;
            resolve(kept);
          },
        };
        queue.push({ input: JSON.stringify(input), keep, left: count });
        wakeParked();
      });
    },
    async close() {
      for (const { res } of parked) res.destroy();
      for (const res of stopPolls) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
