/**
 * The result limit in local runs (issue 13): the local worker (dry run, --serve-api,
 * runJob of serverless-worker/testing) applies the platform's 20 MB limit on the
 * serialized result, set the same way (platformTransport.maxResultBytes), so that a
 * result the worker API would refuse fails locally too instead of only in production.
 */
import { describe, expect, it } from 'vitest';
import { runJob } from '../../src/testing/index.js';

interface ErrorRecord {
  error_code?: string;
  error_message?: string;
}

describe('result limit in local runs', () => {
  it('a 21 MB result fails SW_RESULT_TOO_LARGE by default, with its size and the limit', { timeout: 60_000 }, async () => {
    const result = await runJob(() => 'x'.repeat(21_000_000), { input: {} });
    expect(result.status).toBe('FAILED');
    const error = result.error as ErrorRecord;
    expect(error.error_code).toBe('SW_RESULT_TOO_LARGE');
    // {"output":"xxx…"}: 21 000 000 characters and 13 of JSON around them.
    expect(error.error_message).toContain('is 21000013 bytes as JSON');
    expect(error.error_message).toContain('limit of 20000000 bytes');
    expect(error.error_message).toContain('stream the output instead');
  });

  it('an output under 20 MB raw but over it once JSON escapes it fails, naming the serialized size', { timeout: 60_000 }, async () => {
    // 11 M quote characters: each is two bytes (\") in the JSON body.
    const result = await runJob(() => '"'.repeat(11_000_000), { input: {} });
    expect(result.status).toBe('FAILED');
    const error = result.error as ErrorRecord;
    expect(error.error_code).toBe('SW_RESULT_TOO_LARGE');
    expect(error.error_message).toContain('is 22000013 bytes as JSON');
  });

  it('takes platformTransport.maxResultBytes, as on the platform', async () => {
    const options = { platformTransport: { maxResultBytes: 2_048 } };
    const small = await runJob(() => 'y'.repeat(1_000), { input: {} }, { options });
    expect(small).toMatchObject({ status: 'COMPLETED', output: 'y'.repeat(1_000) });
    const large = await runJob(() => 'y'.repeat(5_000), { input: {} }, { options });
    expect(large.status).toBe('FAILED');
    expect(large.error as ErrorRecord).toMatchObject({ error_code: 'SW_RESULT_TOO_LARGE' });
    expect((large.error as ErrorRecord).error_message).toContain("is 5013 bytes as JSON, over the platform's limit of 2048 bytes");
  });

  it('a stream aggregated past the limit: its chunks were delivered, and the error says to turn aggregateStream off', async () => {
    const result = await runJob(
      async function* () {
        for (let i = 0; i < 3; i++) yield String(i).repeat(1_000);
      },
      { input: {} },
      { options: { aggregateStream: true, platformTransport: { maxResultBytes: 2_048 } } },
    );
    expect(result.status).toBe('FAILED');
    expect(result.values).toEqual(['0', '1', '2'].map((digit) => digit.repeat(1_000)));
    const error = result.error as ErrorRecord;
    expect(error.error_code).toBe('SW_RESULT_TOO_LARGE');
    expect(error.error_message).toContain('aggregated stream result');
    expect(error.error_message).toContain('turn aggregateStream off');
    expect(error.error_message).not.toContain('yield it in parts');
  });
});
