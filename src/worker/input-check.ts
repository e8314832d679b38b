/**
 * @module worker/input-check
 * The worker's inputSchema applied outside a job run: the dry run checks its test
 * input before it starts (a start-up error, not a failed job with a traceback), and
 * the local API (`--serve-api`) answers 400 to input the schema refuses.
 */
import type * as z from 'zod';
import { ServerlessWorkerError, formatIssues, summarizeIssues } from '../job/index.js';
import type { ResolvedTestInput } from '../job/test-input.js';

/**
 * Throw SW_INPUT_VALIDATION (400) when `input` fails `schema`, listing every issue;
 * `what` names the input in the message (default `job input`).
 */
export function validateInput(schema: z.ZodType, input: unknown, what = 'job input'): void {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return;
  const issues = summarizeIssues(parsed.error);
  throw new ServerlessWorkerError('SW_INPUT_VALIDATION', `Invalid ${what}: ${formatIssues(issues)}`, { issues });
}

/** The dry run's start-up check: the test input's `input` against the worker's inputSchema (if any). */
export function checkTestInput(schema: z.ZodType | undefined, testInput: ResolvedTestInput): void {
  if (schema) validateInput(schema, testInput.request.input, `test input from ${testInput.from} (it fails the worker's inputSchema)`);
}
