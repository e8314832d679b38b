/**
 * A database of its own for one test (or one test file) on the run's PostgreSQL server
 * (started once, lazily: global-setup.ts). `SW_TEST_POSTGRES_URL` points the tests at a
 * server of your own instead (its maintenance database; each test still gets a fresh one).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import * as z from 'zod';

const BrokerAnswer = z.object({ url: z.string(), startMs: z.number() });

let serverUrl: Promise<string> | undefined;

/** The maintenance-database URL of the run's server. */
export function postgresServerUrl(): Promise<string> {
  const own = process.env.SW_TEST_POSTGRES_URL;
  if (own) return Promise.resolve(own);
  serverUrl ??= (async () => {
    const answer = await fetch(inject('postgresBrokerUrl'));
    const body: unknown = await answer.json();
    if (!answer.ok) throw new Error(`the PostgreSQL test server did not start: ${JSON.stringify(body)}`);
    return BrokerAnswer.parse(body).url;
  })();
  return serverUrl;
}

export interface TestDatabase {
  /** Connection string of the new, empty database. */
  readonly url: string;
  /** Drop it (connections still open to it are ended). */
  drop(): Promise<void>;
}

async function onMaintenance(url: string, statement: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

/** A fresh empty database `sw_test_<random>`. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = await postgresServerUrl();
  const name = `sw_test_${randomBytes(6).toString('hex')}`;
  await onMaintenance(server, `CREATE DATABASE ${name} STRATEGY FILE_COPY`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onMaintenance(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
