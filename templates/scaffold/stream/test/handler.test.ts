/**
 * The handler through the real worker runtime and an in-process harness
 * (serverless-worker/testing), with the options the worker serves with.
 * Run with `npm test` (node:test; vitest works the same way).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { runJob, streamJob } from 'serverless-worker/testing';
import { handler, options } from '../src/handler.js';

test('the test input streams one chunk a word', async () => {
  const request: unknown = JSON.parse(await readFile(new URL('../test_input.json', import.meta.url), 'utf8'));
  const result = await runJob(handler, request, { options });
  assert.equal(result.status, 'COMPLETED');
  assert.deepEqual(result.values, ['one ', 'two ', 'three ']);
});

test('chunks arrive while the job runs', async () => {
  const seen: unknown[] = [];
  for await (const chunk of streamJob(handler, { input: { prompt: 'a b' } }, { options })) seen.push(chunk.output);
  assert.deepEqual(seen, ['a ', 'b ']);
});

test('input the schema refuses fails before the handler runs', async () => {
  const result = await runJob(handler, { input: { prompt: '' } }, { options });
  assert.equal(result.status, 'FAILED');
  assert.equal(result.error?.error_code, 'SW_INPUT_VALIDATION');
});
