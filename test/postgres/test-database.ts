/**
 * A database of its own for one test (or one test file) on the run's PostgreSQL server
 * (started once, lazily: global-setup.ts). `SW_TEST_POSTGRES_URL` points the tests at a
 * server of your own instead (its maintenance database; each test still gets a fresh one).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import * as z from 'zod';
import { openHarnessDatabase } from '../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../packages/platform/src/harness/postgres/database.js';

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
  /**
   * A harness process's database handle on it (pool of `poolSize`, default 4; the schema
   * migrated), as the CLI opens one: give it to the stores of one "process". drop()
   * closes those still open.
   */
  connect(poolSize?: number): Promise<PostgresDatabase>;
  /** Drop it (the handles connect() made are closed first; other connections still open to it are ended). */
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
  const handles: PostgresDatabase[] = [];
  return {
    url: url.toString(),
    connect: async (poolSize = 4) => {
      const handle = await openHarnessDatabase(url.toString(), { poolSize });
      handles.push(handle);
      return handle;
    },
    drop: async () => {
      await Promise.all(handles.splice(0).map((handle) => handle.close()));
      await onMaintenance(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
