/**
 * OpenAI-compatible worker: answers `/v1/chat/completions`, `/v1/completions` and
 * `/v1/models` in OpenAI's shapes, with a tiny deterministic model (the prompt's words
 * in reverse order). The harness turns `POST /v2/<endpoint>/openai/v1/<route>` into a
 * job whose input is `{openai_route, openai_input}`; with `"stream": true` this worker
 * streams: chat completions as OpenAI chunk objects, completions as ready-made SSE
 * `data:` lines (both forms pass through the harness).
 *
 *     npx tsx examples/openai/worker.ts --serve-api
 *     # then point the openai client at http://127.0.0.1:8000/v2/local/openai/v1
 *
 * Dry run: `npx tsx examples/openai/worker.ts --test-input @examples/openai/test_input.json`.
 */
import { serve } from 'serverless-worker';
import { OpenAiJobInput, openAiHandler } from './handler.js';

await serve(openAiHandler, { inputSchema: OpenAiJobInput });
