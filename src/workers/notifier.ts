import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type pg from 'pg';
import type { Database, Db } from '../db/database.ts';
import { channelPrefix, notifiesAcrossProcesses, notifyAtCommit } from '../db/notifications.ts';

/** Work queues that can be woken: each is a table some worker claims from. */
export type Channel = 'messages' | 'webhooks' | 'templates' | 'sandbox' | 'accounts';
const CHANNELS: Channel[] = ['messages', 'webhooks', 'templates', 'sandbox', 'accounts'];
/** PostgreSQL takes payloads under 8,000 bytes: a longer list of projects is sent as none. */
const MAX_PAYLOAD_LENGTH = 7000;

/** Called with the projects whose new work woke it; empty when not known (then look everywhere). */
export type Wake = (projectIds: readonly string[]) => void;

/** A notification's payload: the projects that got work, comma-separated, or '' when too many. */
export function notificationPayload(projectIds: Iterable<string>): string {
  const payload = [...new Set(projectIds)].join(',');
  return payload.length <= MAX_PAYLOAD_LENGTH ? payload : '';
}

/**
 * Wakes workers the moment work is committed, instead of on their next poll. In-process always;
 * on PostgreSQL also across processes, through LISTEN/NOTIFY (a NOTIFY inside a transaction is
 * delivered at its commit, so a worker never wakes before the work is visible). A wake names the
 * projects that got work, so a worker serves a newly active tenant at once (projectRotation.ts).
 */
export class Notifier {
  readonly #database: Database;
  readonly #logger: Logger;
  readonly #local = new EventEmitter();
  #listener: pg.PoolClient | undefined;
  #closed = false;
  #channelPrefix: Promise<string> | undefined;
  /** In-process: the projects named by transactions since the channel's last local wake. */
  readonly #pending = new Map<Channel, Set<string>>();

  constructor(database: Database, logger: Logger) {
    this.#database = database;
    this.#logger = logger;
    this.#local.setMaxListeners(100);
  }

  on(channel: Channel, wake: Wake): void {
    this.#local.on(channel, wake);
  }

  /**
   * Call inside the transaction that creates the work (after the insert, before the commit), with
   * the projects it is for; in-process, the next wakeLocal (after the commit) names them.
   */
  async notifyInTransaction(trx: Db, channel: Channel, projectIds: Iterable<string> = []): Promise<void> {
    const databaseChannel = await this.databaseChannel(channel);
    if (databaseChannel !== undefined) {
      await notifyAtCommit(trx, databaseChannel, notificationPayload(projectIds));
    } else {
      this.#remember(channel, projectIds);
    }
  }

  #remember(channel: Channel, projectIds: Iterable<string>): void {
    let pending = this.#pending.get(channel);
    if (!pending) this.#pending.set(channel, (pending = new Set()));
    for (const projectId of projectIds) pending.add(projectId);
  }

  /**
   * The database's channel for a queue, for a statement that notifies it itself (`pg_notify`);
   * undefined when the database notifies no other process (SQLite), where only this process's
   * workers are woken (wakeLocal).
   */
  async databaseChannel(channel: Channel): Promise<string | undefined> {
    return notifiesAcrossProcesses(this.#database.db) ? (await this.#prefix()) + channel : undefined;
  }

  #prefix(): Promise<string> {
    this.#channelPrefix ??= channelPrefix(this.#database.db);
    return this.#channelPrefix;
  }

  /** Call after the commit: wakes this process's workers without a round trip. */
  wakeLocal(channel: Channel, projectIds: Iterable<string> = []): void {
    this.#remember(channel, projectIds);
    const pending = this.#pending.get(channel)!;
    this.#pending.delete(channel);
    this.#local.emit(channel, [...pending]);
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
        this.#local.emit(channel, message.payload ? message.payload.split(',') : []);
      });
      client.on('error', (error) => {
        // Once close() has given the client back, its connection is the pool's to lose: releasing
        // it again would throw out of this handler.
        if (this.#listener !== client) return;
        this.#logger.warn({ err: error }, 'LISTEN connection lost; reconnecting');
        client.release(true);
        this.#listener = undefined;
        setTimeout(() => void this.listen(), 1000).unref();
        for (const channel of CHANNELS) this.#local.emit(channel, []); // catch up on anything missed
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
