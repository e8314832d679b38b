/**
 * Early error answers reach the client: a /run or /runsync body over its limit (413)
 * and a request refused with 401 before its body is read get the JSON error body with
 * their status, never a broken pipe or a reset while the client is still sending.
 * On /run and on /runsync, 51 posts per case: 17 through each of Node's fetch, undici and
 * curl (the three clients at once); every one must be answered, 0 connection errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../../src/job/index.js';
import { startTestServer, type TestServer } from '../../kit/index.js';

/**
 * Posts per client, route and case: 17, so 51 a case, the 50 the issue asked for (50 per
 * client, 150 bodies of up to 20 MB a case, took 90 s of a CI run for no more coverage).
 */
const POSTS = 17;
const API_KEY = 'early-answers-key';
const ROUTES = [
  ['run', MAX_BODY_BYTES.run],
  ['runsync', MAX_BODY_BYTES.runsync],
] as const;

/** A JSON body `extra` bytes over `limit`. */
function bodyOver(limit: number, extra = 64 * 1024): Buffer {
  return Buffer.from(`{"input":{"blob":"${'a'.repeat(limit + extra)}"}}`);
}

interface Tally {
  statuses: Record<string, number>;
  codes: Record<string, number>;
  errors: string[];
}

const newTally = (): Tally => ({ statuses: {}, codes: {}, errors: [] });

function count(tally: Tally, status: number, text: string): void {
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  let code = 'not-json';
  try {
    code = String((JSON.parse(text) as { error?: { code?: unknown } }).error?.code);
  } catch {
    // counted as not-json
  }
  tally.codes[code] = (tally.codes[code] ?? 0) + 1;
}

async function withFetch(url: string, body: Buffer, headers: Record<string, string>, posts = POSTS): Promise<Tally> {
  const tally = newTally();
  for (let i = 0; i < posts; i++) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        signal: AbortSignal.timeout(30_000),
      });
      count(tally, response.status, await response.text());
    } catch (error) {
      tally.errors.push(String((error as Error & { cause?: Error }).cause?.message ?? error));
    }
  }
  return tally;
}

async function withUndici(url: string, body: Buffer, headers: Record<string, string>, posts = POSTS): Promise<Tally> {
  const tally = newTally();
  const agent = new Agent();
  try {
    for (let i = 0; i < posts; i++) {
      try {
        const response = await request(url, {
          dispatcher: agent,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...headers },
          signal: AbortSignal.timeout(30_000),
        });
        count(tally, response.statusCode, await response.body.text());
      } catch (error) {
        tally.errors.push(String((error as Error).message));
      }
    }
  } finally {
    await agent.close();
  }
  return tally;
}

async function withCurl(url: string, file: string, headers: Record<string, string>, out: string, posts = POSTS): Promise<Tally> {
  const tally = newTally();
  const headerArgs = Object.entries({ 'content-type': 'application/json', ...headers }).flatMap(([key, value]) => ['-H', `${key}: ${value}`]);
  for (let i = 0; i < posts; i++) {
    const run = await execa('curl', ['-sS', '-o', out, '-w', '%{http_code}', '--max-time', '30', ...headerArgs, '--data-binary', `@${file}`, url], {
      reject: false,
    });
    if (run.exitCode !== 0) {
      tally.errors.push(`curl exit ${run.exitCode}: ${run.stderr}`);
      continue;
    }
    count(tally, Number(run.stdout), readFileSync(out, 'utf8'));
  }
  return tally;
}

let open: TestServer;
let keyed: TestServer;
const scratch = mkdtempSync(join(tmpdir(), 'sw-early-'));
afterAll(async () => {
  await open?.close();
  await keyed?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeAll(async () => {
  open = await startTestServer();
  keyed = await startTestServer({ apiKey: API_KEY });
});

describe('early error answers reach the client', () => {
  it.each(ROUTES)(
    `over-limit /%s bodies: ${POSTS} posts each through fetch, undici and curl, all answered 413 SW_PAYLOAD_TOO_LARGE`,
    { timeout: 300_000 },
    async (route, limit) => {
      const body = bodyOver(limit);
      const file = join(scratch, `${route}.json`);
      writeFileSync(file, body);
      const url = `${open.endpointUrl()}/${route}`;
      const startedAt = performance.now();
      const [viaFetch, viaUndici, viaCurl] = await Promise.all([
        withFetch(url, body, {}),
        withUndici(url, body, {}),
        withCurl(url, file, {}, join(scratch, `${route}.out`)),
      ]);
      console.log(
        `[early answers] 413 /${route} (${body.length} bytes): fetch ${JSON.stringify(viaFetch)} undici ${JSON.stringify(viaUndici)} curl ${JSON.stringify(viaCurl)} in ${Math.round(performance.now() - startedAt)} ms`,
      );
      for (const tally of [viaFetch, viaUndici, viaCurl]) {
        expect(tally.errors).toEqual([]);
        expect(tally.statuses).toEqual({ 413: POSTS });
        expect(tally.codes).toEqual({ SW_PAYLOAD_TOO_LARGE: POSTS });
      }
    },
  );

  it.each(ROUTES)(
    `401 before the body is read on /%s: ${POSTS} posts each through fetch, undici and curl with a wrong key, all answered 401 SW_UNAUTHORIZED`,
    { timeout: 300_000 },
    async (route) => {
      const body = bodyOver(2 * 1024 * 1024, 0);
      const file = join(scratch, `unauthorized-${route}.json`);
      writeFileSync(file, body);
      const url = `${keyed.endpointUrl()}/${route}`;
      const headers = { authorization: 'Bearer wrong-key' };
      const startedAt = performance.now();
      const [viaFetch, viaUndici, viaCurl] = await Promise.all([
        withFetch(url, body, headers),
        withUndici(url, body, headers),
        withCurl(url, file, headers, join(scratch, `unauthorized-${route}.out`)),
      ]);
      console.log(
        `[early answers] 401 /${route} (${body.length} bytes): fetch ${JSON.stringify(viaFetch)} undici ${JSON.stringify(viaUndici)} curl ${JSON.stringify(viaCurl)} in ${Math.round(performance.now() - startedAt)} ms`,
      );
      for (const tally of [viaFetch, viaUndici, viaCurl]) {
        expect(tally.errors).toEqual([]);
        expect(tally.statuses).toEqual({ 401: POSTS });
        expect(tally.codes).toEqual({ SW_UNAUTHORIZED: POSTS });
      }
    },
  );
});
