/**
 * One command to try the load-balancing example locally: a harness on
 * http://127.0.0.1:8000 (PORT_HARNESS) and the example worker (worker.ts) as a child
 * process registered with it, then the URL to give the openai client. Ctrl+C stops both.
 *
 *     npm run example:load-balancing
 *     curl http://127.0.0.1:8000/lb/local/v1/chat/completions -H 'content-type: application/json' \
 *       -d '{"model":"upper-words-1","messages":[{"role":"user","content":"hello there"}],"stream":true}'
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Harness } from 'serverless-worker/harness';
import { createHarnessServer } from 'serverless-worker-platform';

const ENDPOINT = 'local';
const server = await createHarnessServer({ harness: new Harness(), port: Number(process.env.PORT_HARNESS ?? '8000') });
const worker = spawn(process.execPath, [...process.execArgv, fileURLToPath(new URL('./worker.ts', import.meta.url))], {
  stdio: 'inherit',
  env: { ...process.env, PORT: '0', SERVERLESS_WORKER_HARNESS_URL: server.url, RUNPOD_ENDPOINT_ID: ENDPOINT, RUNPOD_POD_ID: 'example-lb-1' },
});
process.stdout.write(
  [
    `harness: ${server.url}   load-balancing endpoint "${ENDPOINT}": ${server.url}/lb/${ENDPOINT}/<path>`,
    `  openai client base URL: ${server.url}/lb/${ENDPOINT}/v1   health: ${server.url}/v2/${ENDPOINT}/health`,
    '',
  ].join('\n'),
);
const stop = (): void => {
  worker.kill('SIGTERM');
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
worker.once('exit', (code) => {
  void (async () => {
    await server.close();
    await server.config.harness.close();
    process.exit(code ?? 0);
  })();
});
