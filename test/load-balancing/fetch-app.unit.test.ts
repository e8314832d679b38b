/**
 * startLoadBalancingWorker in this process with a fetch-style app (`{ fetch }`, the
 * shape hono's app has): init's state reaches the app, a request body reaches
 * `fetch` as a stream, a streamed Response goes out as it is produced (the first part
 * arrives while the app still holds the rest), and stop() drains. Real sockets on
 * 127.0.0.1, port 0.
 */
import { describe, expect, it } from 'vitest';
import { startLoadBalancingWorker, type InitContext } from '../../src/index.js';
import { within } from '../kit/index.js';

const env = { PORT: '0', SERVERLESS_WORKER_HOST: '127.0.0.1', SERVERLESS_WORKER_EXPECT_GPU: 'none' };

describe('a fetch-style app ({ fetch }, as hono)', () => {
  it('serves it with init state, streamed bodies both ways, and stops cleanly', { timeout: 30_000 }, async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const worker = await startLoadBalancingWorker(
      {
        init: async ({ workerId }: InitContext) => ({ greeting: `hello from ${workerId}` }),
        app: (state) => ({
          async fetch(request: Request): Promise<Response> {
            const url = new URL(request.url);
            if (url.pathname === '/upper' && request.method === 'POST') {
              return new Response((await request.text()).toUpperCase(), { headers: { 'content-type': 'text/plain', 'set-cookie': 'a=1' } });
            }
            if (url.pathname === '/events') {
              const encoder = new TextEncoder();
              const body = new ReadableStream<Uint8Array>({
                async start(controller) {
                  controller.enqueue(encoder.encode(`data: ${state.greeting}\n\n`));
                  await released;
                  controller.enqueue(encoder.encode('data: [DONE]\n\n'));
                  controller.close();
                },
              });
              return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
            }
            return Response.json({ error: 'not found' }, { status: 404 });
          },
        }),
        workerId: 'fetch-app',
        logger: (await import('pino')).pino({ level: 'silent' }),
      },
      { processEnv: env, signals: false },
    );
    try {
      await within(
        (async () => {
          while ((await fetch(`${worker.healthUrl}/ping`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
        '/ping 200',
        10_000,
      );
      expect(worker.state).toBe('ready');
      const upper = await fetch(`${worker.url}/upper`, { method: 'POST', body: 'shout this' });
      expect(await upper.text()).toBe('SHOUT THIS');
      expect(upper.headers.get('set-cookie')).toBe('a=1');
      const events = await fetch(`${worker.url}/events`);
      const reader = events.body!.getReader();
      const first = await within(reader.read(), 'the first event while the stream is held', 5_000);
      expect(Buffer.from(first.value!).toString()).toBe('data: hello from fetch-app\n\n');
      release();
      let rest = '';
      for (let step = await reader.read(); !step.done; step = await reader.read()) rest += Buffer.from(step.value).toString();
      expect(rest).toBe('data: [DONE]\n\n');
      expect((await fetch(`${worker.url}/nothing`)).status).toBe(404);
    } finally {
      release();
      expect(await within(worker.stop(), 'stop', 10_000)).toBe(0);
    }
    expect(worker.state).toBe('stopped');
  });
});
