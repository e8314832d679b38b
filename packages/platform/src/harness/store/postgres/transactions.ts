/**
 * @module harness/store/postgres/transactions
 * The store's transactions, retried on a deadlock or a serialization failure (nothing of
 * a failed try is kept): plain ones, whose caller publishes what it did, and changing
 * ones, whose counter moves are saved in them and whose events are published once they
 * committed.
 */
import postgres from 'postgres';
import { transaction } from '../../postgres/transaction.js';
import type { StoreEvent } from 'serverless-worker/internal';
import { finishChanges, newChanges, type Changes, type Tx } from './job-changes.js';

/** PostgreSQL error codes a transaction is retried on: deadlock, serialization failure. */
const RETRIED_CODES = new Set(['40P01', '40001']);
const RETRIES = 3;

const retried = (error: unknown, attempt: number): boolean => attempt < RETRIES && error instanceof postgres.PostgresError && RETRIED_CODES.has(error.code);

/** Run `work` in a transaction, retried on a deadlock or serialization failure; the caller publishes what it did. */
export async function inTransaction<T>(sql: postgres.Sql, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction(sql, work);
    } catch (error) {
      if (!retried(error, attempt)) throw error;
    }
  }
}

/**
 * Run `work` in a transaction: its counter moves are saved in it; once it committed, its
 * events go to `publish`. Retried on a deadlock or serialization failure.
 */
export async function changeInTransaction<T>(
  sql: postgres.Sql,
  work: (tx: Tx, changes: Changes) => Promise<T>,
  publish: (events: readonly StoreEvent[]) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const changes = newChanges();
    try {
      const answer = await transaction(sql, async (tx) => {
        const result = await work(tx, changes);
        await finishChanges(tx, changes);
        return result;
      });
      publish(changes.events);
      return answer;
    } catch (error) {
      if (!retried(error, attempt)) throw error;
    }
  }
}
