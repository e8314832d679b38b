/**
 * @module harness/store/postgres/endpoints
 * Endpoints in PostgreSQL (`sw_endpoints`): created on first use or by the management
 * API, with the settings the store's rules need; deleting one deletes its jobs (chunks
 * with them), workers and counters.
 */
import type postgres from 'postgres';
import { transaction } from '../../postgres/transaction.js';
import type { EndpointSettings } from 'serverless-worker/internal';

export async function createEndpoint(sql: postgres.Sql, endpointId: string, settings?: EndpointSettings): Promise<void> {
  if (settings) {
    await sql`INSERT INTO sw_endpoints (id, default_execution_timeout_ms) VALUES (${endpointId}, ${settings.defaultExecutionTimeoutMs ?? null})
      ON CONFLICT (id) DO UPDATE SET default_execution_timeout_ms = EXCLUDED.default_execution_timeout_ms`;
  } else {
    await sql`INSERT INTO sw_endpoints (id) VALUES (${endpointId}) ON CONFLICT (id) DO NOTHING`;
  }
}

export async function deleteEndpoint(sql: postgres.Sql, endpointId: string): Promise<boolean> {
  return transaction(sql, async (tx) => {
    const deleted = await tx`DELETE FROM sw_endpoints WHERE id = ${endpointId} RETURNING id`;
    await tx`DELETE FROM sw_jobs WHERE endpoint_id = ${endpointId}`;
    await tx`DELETE FROM sw_workers WHERE endpoint_id = ${endpointId}`;
    await tx`DELETE FROM sw_counters WHERE endpoint_id = ${endpointId}`;
    return deleted.length > 0;
  });
}

export async function listEndpoints(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`SELECT id FROM sw_endpoints ORDER BY id COLLATE "C"`;
  return rows.map((row) => row.id);
}

export async function endpointSettings(sql: postgres.Sql, endpointId: string): Promise<EndpointSettings | undefined> {
  const rows = await sql<{ timeout: string | null }[]>`SELECT default_execution_timeout_ms AS timeout FROM sw_endpoints WHERE id = ${endpointId}`;
  const row = rows[0];
  if (!row) return undefined;
  return row.timeout === null ? {} : { defaultExecutionTimeoutMs: Number(row.timeout) };
}
