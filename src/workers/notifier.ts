import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type pg from 'pg';
import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';

/** Work queues that can be woken: each is a table some worker claims from. */
export type Channel = 'messages' | 'webhooks' | 'templates' | 'sandbox' | 'accounts';
const CHANNELS: Channel[] = ['messages', 'webhooks', 'templates', 'sandbox', 'accounts'];
const PG_PREFIX = 'svc_';

/**
 * Wakes workers the moment work is committed, instead of on their next poll. In-process always;
 * on PostgreSQL also across processes, through LISTEN/NOTIFY (a NOTIFY inside a transaction is
 * delivered at its commit, so a worker never wakes before the work is visible).
 */
export class Notifier {
  readonly #database: Database;
  readonly #logger: Logger;
  readonly #local = new EventEmitter();
  #listener: pg.PoolClient | undefined;
  #closed = false;
  #channelPrefix: Promise<string> | undefined;

  constructor(database: Database, logger: Logger) {
    this.#database = database;
    this.#logger = logger;
    this.#local.setMaxListeners(100);
  }

  on(channel: Channel, wake: () => void): void {
    this.#local.on(channel, wake);
  }

  /** Call inside the transaction that creates the work (after the insert, before the commit). */
  async notifyInTransaction(trx: Db, channel: Channel): Promise<void> {
    if (this.#database.dialect === 'postgres') {
      await sql`select pg_notify(${await this.postgresChannel(channel)}, '')`.execute(trx);
    }
  }

  /**
   * The PostgreSQL channel of a queue, for a statement that notifies it itself (`pg_notify`);
   * undefined with SQLite, where only this process's workers are woken (wakeLocal).
   */
  async postgresChannel(channel: Channel): Promise<string | undefined> {
    return this.#database.dialect === 'postgres' ? (await this.#prefix()) + channel : undefined;
  }

  /**
   * Channels are per database, not per schema: they are named after the schema (a short hash of
   * its name), so two deployments in two schemas of one database never wake each other.
   */
  #prefix(): Promise<string> {
    this.#channelPrefix ??= sql<{ schema: string }>`select current_schema() as schema`
      .execute(this.#database.db)
      .then((result) => `${PG_PREFIX}${createHash('sha256').update(result.rows[0]!.schema).digest('hex').slice(0, 12)}_`);
    return this.#channelPrefix;
  }

  /** Call after the commit: wakes this process's workers without a round trip. */
  wakeLocal(channel: Channel): void {
    this.#local.emit(channel);
  }

  /** Listens for other processes' notifications (PostgreSQL only); reconnects if the link drops. */
  async listen(): Promise<void> {
    const pool = this.#database.pool;
    if (!pool || this.#closed) return;
    try {
      const prefix = await this.#prefix();
      const client = await pool.connect();
      this.#listener = client;
      client.on('notification', (message) => {
        const channel = message.channel.slice(prefix.length) as Channel;
        this.#local.emit(channel);
      });
      client.on('error', (error) => {
        this.#logger.warn({ err: error }, 'LISTEN connection lost; reconnecting');
        client.release(true);
        this.#listener = undefined;
        setTimeout(() => void this.listen(), 1000).unref();
        for (const channel of CHANNELS) this.#local.emit(channel); // catch up on anything missed
      });
      for (const channel of CHANNELS) await client.query(`LISTEN ${prefix}${channel}`);
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not LISTEN; retrying');
      setTimeout(() => void this.listen(), 1000).unref();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#local.removeAllListeners();
    if (this.#listener) {
      const client = this.#listener;
      this.#listener = undefined;
      await client.query('UNLISTEN *').catch(() => {});
      client.release();
    }
  }
}
