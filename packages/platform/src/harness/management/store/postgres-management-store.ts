/**
 * @module harness/management/store/postgres-management-store
 * The management store on PostgreSQL (`--store postgres://…`): templates, network
 * volumes and endpoints outlive the harness process and are the same for every harness
 * on the database, so an endpoint created through one is served, scaled and listed by
 * all. The record rules are records.ts's (the in-memory store's); each changing call is
 * one transaction that locks the rows its rule reads, and the database enforces what
 * must hold across processes: unique template names (a unique index) and references
 * (an endpoint's template and volume cannot be deleted while it uses them).
 *
 * It runs on the process's one database handle (harness/postgres/database.ts), which
 * its opener closes:
 *
 *     const store = new PostgresManagementStore(database);
 *     app.register(managementApi, { prefix: '/v1', store });
 *     …
 *     await store.close();
 *     await database.close();
 */
import type postgres from 'postgres';
import { transaction, type TransactionSql } from '../../postgres/transaction.js';
import { systemClock } from 'serverless-worker/internal';
import type {
  Endpoint,
  EndpointCreate,
  EndpointUpdate,
  NetworkVolume,
  NetworkVolumeCreate,
  NetworkVolumeUpdate,
  Template,
  TemplateCreate,
  TemplateUpdate,
} from '../schemas/index.js';
import type { PostgresDatabase } from '../../postgres/database.js';
import { ID_LENGTH, newId } from './ids.js';
import type { ManagementStore } from './management-store.js';
import {
  UNIQUE_VIOLATION,
  endpointsOfTemplate,
  endpointsOfVolume,
  readEndpoint,
  readEndpoints,
  readTemplate,
  readTemplates,
  readVolume,
  readVolumes,
  sqlState,
  templateNamed,
  type Db,
} from './postgres-management-rows.js';
import {
  endpointNotFound,
  networkVolumeInUse,
  newEndpoint,
  newNetworkVolume,
  newTemplate,
  patchedEndpoint,
  patchedNetworkVolume,
  patchedTemplate,
  templateInUse,
  templateNameTaken,
  withRelease,
} from './records.js';

export interface PostgresManagementStoreOptions {
  /** The clock for release and creation times; default the system clock. */
  readonly now?: () => number;
}

type Json = postgres.JSONValue;

export class PostgresManagementStore implements ManagementStore {
  readonly kind = 'postgres';
  readonly #sql: postgres.Sql;
  readonly #now: () => number;
  #closed = false;

  /** The store on `database` (opened and migrated by the caller, who closes it). */
  constructor(database: PostgresDatabase, options: PostgresManagementStoreOptions = {}) {
    this.#sql = database.sql;
    this.#now = options.now ?? (() => systemClock.now());
  }

  // ---- templates ----

  async createTemplate(input: TemplateCreate): Promise<Template> {
    const { template, serverlessUnset } = newTemplate(
      newId(ID_LENGTH.template, () => false),
      input,
    );
    await this.#named(
      template.name,
      () =>
        this.#sql`INSERT INTO sw_mgmt_templates (id, name, serverless_unset, record)
        VALUES (${template.id}, ${template.name}, ${serverlessUnset}, ${this.#sql.json(template as Json)})`,
    );
    return template;
  }

  async updateTemplate(id: string, patch: TemplateUpdate): Promise<Template> {
    return this.#tx(async (tx) => {
      const { template: before } = await readTemplate(tx, id, 'update');
      const { after, changedFields } = patchedTemplate(before, patch);
      await this.#named(after.name, () => tx`UPDATE sw_mgmt_templates SET name = ${after.name}, record = ${tx.json(after as Json)} WHERE id = ${id}`);
      // The spec: an update triggers a rolling release for every endpoint using the template.
      const at = this.#now();
      for (const endpoint of await endpointsOfTemplate(tx, id)) {
        await this.#saveEndpoint(tx, withRelease(endpoint, 'template-update', changedFields, at));
      }
      return after;
    });
  }

  async getTemplate(id: string): Promise<Template> {
    return (await readTemplate(this.#sql, id)).template;
  }

  listTemplates(): Promise<Template[]> {
    return readTemplates(this.#sql);
  }

  async deleteTemplate(id: string): Promise<void> {
    await this.#tx(async (tx) => {
      await readTemplate(tx, id, 'update');
      const users = (await endpointsOfTemplate(tx, id)).map((endpoint) => endpoint.id);
      if (users.length > 0) throw templateInUse(id, users);
      await tx`DELETE FROM sw_mgmt_templates WHERE id = ${id}`;
    });
  }

  // ---- network volumes ----

  async createNetworkVolume(input: NetworkVolumeCreate): Promise<NetworkVolume> {
    const volume = newNetworkVolume(
      newId(ID_LENGTH.networkVolume, () => false),
      input,
    );
    await this.#sql`INSERT INTO sw_mgmt_network_volumes (id, record) VALUES (${volume.id}, ${this.#sql.json(volume as Json)})`;
    return volume;
  }

  async updateNetworkVolume(id: string, patch: NetworkVolumeUpdate): Promise<NetworkVolume> {
    return this.#tx(async (tx) => {
      const after = patchedNetworkVolume(await readVolume(tx, id, 'update'), patch);
      await tx`UPDATE sw_mgmt_network_volumes SET record = ${tx.json(after as Json)} WHERE id = ${id}`;
      return after;
    });
  }

  getNetworkVolume(id: string): Promise<NetworkVolume> {
    return readVolume(this.#sql, id);
  }

  listNetworkVolumes(): Promise<NetworkVolume[]> {
    return readVolumes(this.#sql);
  }

  async deleteNetworkVolume(id: string): Promise<void> {
    await this.#tx(async (tx) => {
      await readVolume(tx, id, 'update');
      const users = await endpointsOfVolume(tx, id);
      if (users.length > 0) throw networkVolumeInUse(id, users);
      await tx`DELETE FROM sw_mgmt_network_volumes WHERE id = ${id}`;
    });
  }

  // ---- endpoints ----

  async createEndpoint(input: EndpointCreate): Promise<Endpoint> {
    return this.#tx(async (tx) => {
      // FOR SHARE: the template (and volume) cannot be deleted until this endpoint is in.
      const { template, serverlessUnset } = await readTemplate(tx, input.templateId, 'share', 'templateId');
      const endpoint = newEndpoint(
        newId(ID_LENGTH.endpoint, () => false),
        input,
        template,
        serverlessUnset,
        this.#now(),
      );
      if (input.networkVolumeId !== undefined) await readVolume(tx, input.networkVolumeId, 'share', 'networkVolumeId');
      await tx`INSERT INTO sw_mgmt_endpoints (id, template_id, network_volume_id, record)
        VALUES (${endpoint.id}, ${endpoint.templateId}, ${endpoint.networkVolumeId ?? null}, ${tx.json(endpoint as Json)})`;
      return endpoint;
    });
  }

  async updateEndpoint(id: string, patch: EndpointUpdate): Promise<Endpoint> {
    return this.#tx(async (tx) => {
      const before = await readEndpoint(tx, id, 'update');
      const { template, serverlessUnset } = await readTemplate(tx, patch.templateId ?? before.templateId, 'share', 'templateId');
      const after = patchedEndpoint(before, patch, template, serverlessUnset, this.#now());
      if (patch.networkVolumeId !== undefined) await readVolume(tx, patch.networkVolumeId, 'share', 'networkVolumeId');
      await this.#saveEndpoint(tx, after);
      return after;
    });
  }

  getEndpoint(id: string): Promise<Endpoint> {
    return readEndpoint(this.#sql, id);
  }

  async hasEndpoint(id: string): Promise<boolean> {
    const rows = await this.#sql`SELECT 1 FROM sw_mgmt_endpoints WHERE id = ${id}`;
    return rows.length > 0;
  }

  listEndpoints(): Promise<Endpoint[]> {
    return readEndpoints(this.#sql);
  }

  async deleteEndpoint(id: string): Promise<void> {
    const rows = await this.#sql`DELETE FROM sw_mgmt_endpoints WHERE id = ${id} RETURNING id`;
    if (rows.length === 0) throw endpointNotFound(id);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // The connections are the database handle's: its opener closes it.
    this.#closed = true;
  }

  // ---- internals ----

  async #saveEndpoint(tx: Db, endpoint: Endpoint): Promise<void> {
    await tx`UPDATE sw_mgmt_endpoints SET template_id = ${endpoint.templateId}, network_volume_id = ${endpoint.networkVolumeId ?? null},
      record = ${this.#sql.json(endpoint as Json)} WHERE id = ${endpoint.id}`;
  }

  /** Run `write`; a unique-name violation becomes SW_TEMPLATE_NAME_TAKEN naming the template that has `name`. */
  async #named(name: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      throw templateNameTaken(name, (await templateNamed(this.#sql, name)) ?? 'unknown');
    }
  }

  /** One transaction (the rows its reads lock stay locked until it ends). */
  async #tx<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error('The management store is closed');
    return transaction(this.#sql, work);
  }
}
