/**
 * cli-run.ts's `runCli`: the program run in this process with its own connection variables.
 * Calls made at the same time (a test's `Promise.all`) take turns: each puts its variables
 * into process.env and the working directory for its run, and overlapping runs restored each
 * other's values, leaving the last one's SERVERLESS_WORKER_API_URL/_KEY in the process for the
 * next file of a shared worker (the integration tier's files share their workers: a harness
 * started there as a child then took that key and answered 401).
 */
import { describe, expect, it } from 'vitest';
import { failureLine, runCli } from './cli-run.js';

/** Loopback ports nothing listens on (discard, echo): the command fails at once, naming its URL. */
const NOWHERE = ['http://127.0.0.1:9/v1', 'http://127.0.0.1:7/v1'] as const;

describe('runCli', () => {
  it('runs calls made at the same time one after the other, each with its own variables, and leaves process.env and the working directory as they were', async () => {
    const names = ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY'] as const;
    const before = names.map((name) => process.env[name]);
    const cwd = process.cwd();
    const runs = await Promise.all(
      NOWHERE.map((url, index) => runCli(['endpoint', 'list'], { SERVERLESS_WORKER_API_URL: url, SERVERLESS_WORKER_API_KEY: `key-${index}` })),
    );
    runs.forEach((run, index) => {
      expect(run.code, run.stderr).toBe(1);
      expect(failureLine(run)).toContain(NOWHERE[index]);
    });
    expect(names.map((name) => process.env[name])).toEqual(before);
    expect(process.cwd()).toBe(cwd);
  });
});
