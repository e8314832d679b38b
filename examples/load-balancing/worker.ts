/**
 * A load-balancing worker: an OpenAI-style HTTP app (fastify) on PORT, `/ping` on
 * PORT_HEALTH answered by the runtime (204 while init loads the model, 200 once ready,
 * 503 while draining). Run it with the harness in one command:
 *
 *     npm run example:load-balancing
 *
 * or alone (`PORT=8080 npx tsx examples/load-balancing/worker.ts`), or joining a
 * running `serverless-worker harness` with SERVERLESS_WORKER_HARNESS_URL and
 * RUNPOD_ENDPOINT_ID set.
 */
import { serveLoadBalancing, type InitContext } from 'serverless-worker';
import { buildApp } from './app.js';
import { loadModel } from './model.js';

await serveLoadBalancing({
  port: 8080,
  // Loaded once; every request uses it.
  init: ({ signal, log }: InitContext) => {
    log.info('loading the model');
    return loadModel(Number(process.env.MODEL_LOAD_MS ?? '500'), signal);
  },
  app: (model) => buildApp(model),
});
