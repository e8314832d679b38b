/**
 * Opening a PostgreSQL job store that cannot be reached or refuses the login: the error
 * names the store (host, port, database) and says what to check, and never carries the
 * password. Against the run's embedded PostgreSQL server (a wrong password) and a closed
 * port on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { openJobStore } from '../../../packages/platform/src/harness/open-store.js';
import { postgresServerUrl } from '../../postgres/test-database.js';
import { closedPort } from '../../kit/index.js';

const SECRET = 'pw-Secret-4711';

async function failure(spec: string): Promise<Error & { code?: string; details?: unknown }> {
  const error = await openJobStore(spec).then(
    async ({ store, database }) => {
      await store.close();
      await database?.close();
      throw new Error('the store opened');
    },
    (caught: unknown) => caught as Error & { code?: string },
  );
  return error;
}

describe('openJobStore on a PostgreSQL server it cannot use', () => {
  it('names the store and hides the password when nothing listens on the port', { timeout: 60_000 }, async () => {
    const port = await closedPort();
    const error = await failure(`postgres://sw:${SECRET}@127.0.0.1:${port}/jobs`);
    expect(error).toMatchObject({ code: 'SW_STORE_UNAVAILABLE' });
    expect(error.message).toContain(`postgres 127.0.0.1:${port}/jobs`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(
      JSON.stringify({ message: error.message, stack: error.stack, details: error.details, cause: String((error as { cause?: unknown }).cause) }),
    ).not.toContain(SECRET);
  });

  it('names the store and hides the password when the login is refused (embedded PostgreSQL, wrong password)', { timeout: 60_000 }, async () => {
    const server = new URL(await postgresServerUrl());
    server.username = 'sw_nobody';
    server.password = SECRET;
    const error = await failure(server.toString());
    expect(error).toMatchObject({ code: 'SW_STORE_UNAVAILABLE' });
    expect(error.message).toContain(`postgres ${server.host}${server.pathname}`);
    expect(error.message).toMatch(/sw_nobody/);
    expect(
      JSON.stringify({ message: error.message, stack: error.stack, details: error.details, cause: String((error as { cause?: unknown }).cause) }),
    ).not.toContain(SECRET);
  });
});
