/**
 * @module test/reliability/support/fault-proxy
 * A fault-injecting HTTP proxy on 127.0.0.1, written with node:http, that stands
 * between worker processes (or in-process workers) and the harness's worker API. On a
 * seeded share of the calls of each worker route (job-take, job-done, job-stream,
 * job-stop, ping) it injects one fault, in either direction:
 *
 * | fault | the harness | the worker |
 * |---|---|---|
 * | `drop` | never sees the call | no answer until its own timeout (or `dropHoldMs`) |
 * | `reset` | never sees the call | the connection is reset (TCP RST) |
 * | `5xx` | never sees the call | 502 or 503 |
 * | `delay` | sees the call late | a late answer |
 * | `lose-answer` | handles the call | the connection is reset instead of the answer |
 * | `5xx-after` | handles the call | 502 or 503 instead of the answer |
 * | `delay-answer` | handles the call | the answer, late |
 *
 * A call whose worker went away while it was held or delayed is not forwarded (or its
 * upstream request is cut), as a real proxy does.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './random.js';

export const WORKER_ROUTES = ['job-take', 'job-done', 'job-stream', 'job-stop', 'ping'] as const;
export type WorkerRoute = (typeof WORKER_ROUTES)[number];
export type ProxiedRoute = WorkerRoute | 'other';

export const FAULTS = ['drop', 'reset', '5xx', 'delay', 'lose-answer', '5xx-after', 'delay-answer'] as const;
export type Fault = (typeof FAULTS)[number];

export interface FaultPlan {
  /** Seed of the decisions; print it to reproduce a run. */
  readonly seed: number;
  /** Share of calls faulted, 0 to 1, per route; routes left out pass untouched. */
  readonly rates: Partial<Record<WorkerRoute, number>>;
  /** Faults to choose from (uniformly); default all of FAULTS. */
  readonly faults?: readonly Fault[];
  /** Delay of `delay` and `delay-answer`, ms. */
  readonly delayMs?: { readonly min: number; readonly max: number };
  /** Longest a dropped call is held before its connection is closed, ms; default 10 000. */
  readonly dropHoldMs?: number;
}

export interface ProxyStats {
  readonly calls: Record<ProxiedRoute, number>;
  readonly faults: Record<WorkerRoute, Record<Fault, number>>;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give it to workers instead of the harness's origin. */
  readonly origin: string;
  readonly stats: ProxyStats;
  /** Faults injected so far, all routes and kinds. */
  totalFaults(): number;
  /** Faults injected per kind, all routes. */
  faultsByKind(): Record<Fault, number>;
  /** Change the share of faulted calls from now on. */
  setRates(rates: FaultPlan['rates']): void;
  close(): Promise<void>;
}

/** The worker route a path belongs to. */
export function routeOf(path: string): ProxiedRoute {
  if (path.includes('/job-take/') || path.includes('/job-take-batch/')) return 'job-take';
  if (path.includes('/job-done/')) return 'job-done';
  if (path.includes('/job-stream/')) return 'job-stream';
  if (path.includes('/job-stop/')) return 'job-stop';
  if (path.includes('/ping/')) return 'ping';
  return 'other';
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer', 'content-length']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

interface Upstream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

/** Start a proxy to `target` (`http://127.0.0.1:<port>`) with `plan`. */
export async function startFaultProxy(target: string, plan: FaultPlan): Promise<FaultProxy> {
  const upstreamUrl = new URL(target);
  const random = seededRandom(plan.seed);
  let rates = plan.rates;
  const faults = plan.faults ?? FAULTS;
  const delay = plan.delayMs ?? { min: 20, max: 300 };
  const dropHoldMs = plan.dropHoldMs ?? 10_000;
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const timers = new Set<NodeJS.Timeout>();
  const stats: ProxyStats = {
    calls: zeroCounts<ProxiedRoute>([...WORKER_ROUTES, 'other']),
    faults: Object.fromEntries(WORKER_ROUTES.map((route) => [route, zeroCounts(FAULTS)])) as ProxyStats['faults'],
  };

  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const readBody = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => resolve(Buffer.concat(parts)));
      req.on('error', reject);
      req.on('aborted', () => reject(new Error('client aborted')));
    });

  const forward = (req: IncomingMessage, body: Buffer, clientGone: AbortSignal): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const headers = endToEnd(req.headers);
      headers.host = upstreamUrl.host;
      if (body.length > 0) headers['content-length'] = String(body.length);
      const upstream = httpRequest({ host: upstreamUrl.hostname, port: upstreamUrl.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (part: Buffer) => parts.push(part));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) }));
        answer.on('error', reject);
      });
      upstream.on('error', reject);
      // The worker went away: cut the upstream call, so that a held long poll ends on the harness too.
      const onGone = (): void => void upstream.destroy(new Error('client gone'));
      if (clientGone.aborted) onGone();
      else clientGone.addEventListener('abort', onGone, { once: true });
      upstream.end(body);
    });

  const send = (res: ServerResponse, answer: Upstream): void => {
    if (res.destroyed) return;
    const headers = endToEnd(answer.headers);
    headers['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  };

  const sendStatus = (res: ServerResponse, status: number): void => {
    if (res.destroyed) return;
    const body = JSON.stringify({ error: 'injected by the fault proxy', status });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  };

  const reset = (req: IncomingMessage): void => {
    const socket = req.socket;
    if (!socket.destroyed) socket.resetAndDestroy();
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const route = routeOf((req.url ?? '/').split('?')[0] ?? '/');
    stats.calls[route]++;
    // Decide before any await, so that the seeded sequence follows the order calls arrive in.
    const rate = route === 'other' ? 0 : (rates[route] ?? 0);
    const fault = rate > 0 && random.next() < rate ? random.pick(faults) : undefined;
    const delayMs = random.int(delay.min, delay.max);
    const status = random.next() < 0.5 ? 502 : 503;
    if (fault !== undefined && route !== 'other') stats.faults[route][fault]++;

    const body = await readBody(req);
    switch (fault) {
      case 'drop': {
        await Promise.race([wait(dropHoldMs), new Promise<void>((resolve) => gone.signal.addEventListener('abort', () => resolve(), { once: true }))]);
        reset(req);
        return;
      }
      case 'reset':
        reset(req);
        return;
      case '5xx':
        sendStatus(res, status);
        return;
      case 'delay':
        await wait(delayMs);
        break;
      default:
        break;
    }
    if (gone.signal.aborted) return;
    const answer = await forward(req, body, gone.signal);
    switch (fault) {
      case 'lose-answer':
        reset(req);
        return;
      case '5xx-after':
        sendStatus(res, status);
        return;
      case 'delay-answer':
        await wait(delayMs);
        break;
      default:
        break;
    }
    send(res, answer);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      // The client or the harness went away mid-call: the worker sees a reset and retries.
      if (!req.socket.destroyed) req.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    stats,
    totalFaults: () => WORKER_ROUTES.reduce((sum, route) => sum + FAULTS.reduce((n, fault) => n + stats.faults[route][fault], 0), 0),
    faultsByKind: () => {
      const byKind = zeroCounts(FAULTS);
      for (const route of WORKER_ROUTES) for (const fault of FAULTS) byKind[fault] += stats.faults[route][fault];
      return byKind;
    },
    setRates: (next) => {
      rates = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
