/**
 * @module harness/management/store/postgres-management-rows
 * The PostgreSQL management store's reads: rows parsed with zod at the boundary (the
 * jsonb record is checked against the record schema), each read optionally locking the
 * row for the transaction it runs in, and the endpoints that use a template or mount a
 * volume.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import { EndpointSchema, NetworkVolumeSchema, TemplateSchema, type Endpoint, type NetworkVolume, type Template } from '../schemas/index.js';
import { endpointNotFound, networkVolumeNotFound, templateNotFound } from './records.js';

/** A connection or a transaction: what a read runs on. */
export type Db = postgres.Sql | postgres.TransactionSql;

/** The PostgreSQL error code the store turns into SW_TEMPLATE_NAME_TAKEN. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a driver error, if it has one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const TemplateRow = z.object({ record: TemplateSchema, serverless_unset: z.boolean() });
const VolumeRow = z.object({ record: NetworkVolumeSchema });
const EndpointRow = z.object({ record: EndpointSchema });
const IdRow = z.object({ id: z.string() });

/** How a read treats its row: `share` keeps it from changing or going until the transaction ends, `update` also from other writers. */
export type Lock = 'none' | 'share' | 'update';

export interface StoredTemplate {
  readonly template: Template;
  readonly serverlessUnset: boolean;
}

/** The template `id`, or SW_TEMPLATE_NOT_FOUND (`field` names the body field the id came from). */
export async function readTemplate(db: Db, id: string, lock: Lock = 'none', field?: string): Promise<StoredTemplate> {
  const rows =
    lock === 'update'
      ? await db`SELECT record, serverless_unset FROM sw_mgmt_templates WHERE id = ${id} FOR UPDATE`
      : lock === 'share'
        ? await db`SELECT record, serverless_unset FROM sw_mgmt_templates WHERE id = ${id} FOR SHARE`
        : await db`SELECT record, serverless_unset FROM sw_mgmt_templates WHERE id = ${id}`;
  if (rows.length === 0) throw templateNotFound(id, field);
  const row = TemplateRow.parse(rows[0]);
  return { template: row.record, serverlessUnset: row.serverless_unset };
}

export async function readTemplates(db: Db): Promise<Template[]> {
  const rows = await db`SELECT record, serverless_unset FROM sw_mgmt_templates ORDER BY seq`;
  return rows.map((row) => TemplateRow.parse(row).record);
}

export async function readVolume(db: Db, id: string, lock: Lock = 'none', field?: string): Promise<NetworkVolume> {
  const rows =
    lock === 'update'
      ? await db`SELECT record FROM sw_mgmt_network_volumes WHERE id = ${id} FOR UPDATE`
      : lock === 'share'
        ? await db`SELECT record FROM sw_mgmt_network_volumes WHERE id = ${id} FOR SHARE`
        : await db`SELECT record FROM sw_mgmt_network_volumes WHERE id = ${id}`;
  if (rows.length === 0) throw networkVolumeNotFound(id, field);
  return VolumeRow.parse(rows[0]).record;
}

export async function readVolumes(db: Db): Promise<NetworkVolume[]> {
  const rows = await db`SELECT record FROM sw_mgmt_network_volumes ORDER BY seq`;
  return rows.map((row) => VolumeRow.parse(row).record);
}

export async function readEndpoint(db: Db, id: string, lock: Lock = 'none'): Promise<Endpoint> {
  const rows =
    lock === 'update'
      ? await db`SELECT record FROM sw_mgmt_endpoints WHERE id = ${id} FOR UPDATE`
      : await db`SELECT record FROM sw_mgmt_endpoints WHERE id = ${id}`;
  if (rows.length === 0) throw endpointNotFound(id);
  return EndpointRow.parse(rows[0]).record;
}

export async function readEndpoints(db: Db): Promise<Endpoint[]> {
  const rows = await db`SELECT record FROM sw_mgmt_endpoints ORDER BY seq`;
  return rows.map((row) => EndpointRow.parse(row).record);
}

/** The endpoints using template `id`, locked for update, in creation order. */
export async function endpointsOfTemplate(db: Db, id: string): Promise<Endpoint[]> {
  const rows = await db`SELECT record FROM sw_mgmt_endpoints WHERE template_id = ${id} ORDER BY seq FOR UPDATE`;
  return rows.map((row) => EndpointRow.parse(row).record);
}

/** Ids of the endpoints that mount volume `id`. */
export async function endpointsOfVolume(db: Db, id: string): Promise<string[]> {
  const rows = await db`SELECT id FROM sw_mgmt_endpoints WHERE network_volume_id = ${id} ORDER BY seq`;
  return rows.map((row) => IdRow.parse(row).id);
}

/** The id of the template named `name`, if one is. */
export async function templateNamed(db: Db, name: string): Promise<string | undefined> {
  const rows = await db`SELECT id FROM sw_mgmt_templates WHERE name = ${name}`;
  return rows[0] ? IdRow.parse(rows[0]).id : undefined;
}
