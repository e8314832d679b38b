/**
 * The handler through the real worker runtime and an in-process harness
 * (serverless-worker/testing), with the options the worker serves with: runJob runs
 * `options.init` once per call, as serve() does, unless the test passes `state`.
 * Run with `npm test` (node:test; vitest works the same way).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { runJob } from 'serverless-worker/testing';
import { handler, options } from '../src/handler.js';

test('the test input completes', async () => {
  const request: unknown = JSON.parse(await readFile(new URL('../test_input.json', import.meta.url), 'utf8'));
  const result = await runJob(handler, request, { options });
  assert.equal(result.status, 'COMPLETED');
  assert.deepEqual(result.output, { text: 'hello hello' });
});

test('a given state replaces init (a fake model, or one loaded once for many tests)', async () => {
  const result = await runJob(handler, { input: { prompt: 'hi', times: 3 } }, { options, state: { separator: '-' } });
  assert.equal(result.status, 'COMPLETED');
  assert.deepEqual(result.output, { text: 'hi-hi-hi' });
});

test('input the schema refuses fails before the handler runs', async () => {
  const result = await runJob(handler, { input: { prompt: '' } }, { options });
  assert.equal(result.status, 'FAILED');
  assert.equal(result.error?.error_code, 'SW_INPUT_VALIDATION');
});
