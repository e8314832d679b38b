/**
 * The types of runJob and streamJob (serverless-worker/testing): the request's input is
 * typed from the handler, `output` from what it returns, `values` from what a streaming
 * handler yields, `error` as one object (jobError reads the platform's JSON string too).
 * The `@ts-expect-error` lines are checked by `tsc` (this file is in tsconfig.json): each
 * must be an error, or the type check fails. They sit in functions never called.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import type { Handler, ServeOptions } from 'serverless-worker';
import { jobError, runJob, streamJob, type JobErrorInfo, type TestJobResult } from 'serverless-worker/testing';

const typed = async (job: { input: { prompt: string } }) => ({ text: job.input.prompt, at: 1 });
async function* tokens(job: { input: { prompt: string } }) {
  for (const word of job.input.prompt.split(' ')) yield word;
}
const declared: Handler<{ prompt: string }> = async (job) => job.input.prompt;

/** Never called: what compiles, and what does not. */
function compileOnly(): void {
  void runJob(typed, { input: { prompt: 'hi' } });
  void runJob(typed, { input: { prompt: 'hi' }, policy: { executionTimeout: 10_000 } });
  // @ts-expect-error: prompt is a string in the handler's input.
  void runJob(typed, { input: { prompt: 1 } });
  // @ts-expect-error: a request without input.
  void runJob(typed, { prompt: 'hi' });
  // @ts-expect-error: the handler's input, through Handler<...>, too.
  void runJob(declared, { input: { prompt: 1 } });
  // @ts-expect-error: streamJob as runJob.
  void streamJob(tokens, { input: { prompt: false } });
  // With an inputSchema, the request carries what the schema takes: a default fills `times`.
  const Input = z.object({ prompt: z.string(), times: z.number().default(1) });
  const repeat = async (job: { input: z.infer<typeof Input> }) => job.input.prompt.repeat(job.input.times);
  void runJob(repeat, { input: { prompt: 'hi' } }, { options: { inputSchema: Input } });
  // @ts-expect-error: what the schema takes, typed.
  void runJob(repeat, { input: { prompt: 'hi', times: '2' } }, { options: { inputSchema: Input } });
  // Options typed ServeOptions<Input> (the scaffold's): any field may be left to a default, each of its type.
  const options: ServeOptions<z.infer<typeof Input>> = { inputSchema: Input };
  void runJob(repeat, { input: { prompt: '' } }, { options });
  // @ts-expect-error: prompt is a string.
  void runJob(repeat, { input: { prompt: 1 } }, { options });
  // A request typed unknown (read from test_input.json) is checked when the job runs.
  const fromFile: unknown = JSON.parse('{"input":{"prompt":"hi"}}');
  void runJob(typed, fromFile);
}

describe('runJob and streamJob types', () => {
  it('type output from what the handler returns, values from what it yields, error as one object', async () => {
    expect(typeof compileOnly).toBe('function');
    const result = await runJob(typed, { input: { prompt: 'hi' } });
    expectTypeOf(result.output).toEqualTypeOf<{ text: string; at: number } | undefined>();
    expectTypeOf(result.error).toEqualTypeOf<JobErrorInfo | undefined>();
    expect(result.output).toEqual({ text: 'hi', at: 1 });

    const streamed = await runJob(tokens, { input: { prompt: 'a b' } }, { options: { aggregateStream: true } });
    expectTypeOf(streamed.values).toEqualTypeOf<readonly string[]>();
    expectTypeOf(streamed.output).toEqualTypeOf<string[] | undefined>();
    expect(streamed.values).toEqual(['a', 'b']);

    const plain = await runJob(declared, { input: { prompt: 'x' } });
    expectTypeOf(plain).toEqualTypeOf<TestJobResult<unknown>>();
    expectTypeOf(plain.output).toEqualTypeOf<unknown>();
  });

  it('jobError reads the error of runJob (an object) and of /status (a JSON string) the same', async () => {
    const failed = await runJob(
      async (job: { input: { n: number } }) => {
        throw new RangeError(`n too large: ${job.input.n}`);
      },
      { input: { n: 7 } },
    );
    const fromRunJob = jobError(failed);
    // The /status body of the same job: error as the platform's JSON string.
    const fromStatus = jobError({ id: failed.id, status: 'FAILED', error: JSON.stringify(failed.error) });
    expectTypeOf(fromRunJob).toEqualTypeOf<JobErrorInfo | undefined>();
    expect(fromRunJob).toMatchObject({ error_type: 'RangeError', error_message: 'n too large: 7', error_code: 'SW_HANDLER_ERROR' });
    expect(fromStatus).toEqual(fromRunJob);
    expect(jobError({ status: 'COMPLETED' })).toBeUndefined();
    expect(jobError({ error: 'plain text' })).toEqual({ error_message: 'plain text' });
    expect(() => jobError({ error: 42 })).toThrow(
      'jobError: expected result.error to be a job error (an object with error_message, or its JSON text as /status gives it), got 42',
    );
  });
});
