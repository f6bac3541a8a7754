import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { claimProjectHeads } from '../../src/db/claims.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { queuedMessageRow } from '../../src/db/messages.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { sealSecret } from '../../src/domain/secretBox.ts';
import { createMetricsRegistry } from '../../src/http/metrics.ts';
import type { MessageSubmission, Provider, SendOutcome } from '../../src/providers/provider.ts';
import { Dispatcher, type DispatcherOptions } from '../../src/workers/dispatcher.ts';
import { Notifier } from '../../src/workers/notifier.ts';
import { createSendRateGate } from '../../src/workers/sendRate.ts';
import { createTestDatabase, databaseKinds, type TestDatabase, testProjectRow } from '../support/databases.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';
import { until } from '../support/until.ts';

// The dispatcher against a real database and a scripted provider (the provider is the outside
// world, so it is the one thing faked): what it submits, when, and what it records.

const KEY = Buffer.from(TEST_ENCRYPTION_KEY, 'base64');
const silent = pino({ level: 'silent' });

/** A provider whose sends to some numbers hang until released; every call is recorded. */
class ScriptedProvider implements Provider {
  readonly name = 'sandbox';
  readonly submissionTimeoutMs = 1000;
  readonly calls: { messageId: string; phoneNumberId: string; at: number }[] = [];
  readonly hangingNumbers = new Set<string>();
  #hung: (() => void)[] = [];

  get hanging(): number {
    return this.#hung.length;
  }

  async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    this.calls.push({ messageId: message.messageId, phoneNumberId: message.credentials.sender, at: Date.now() });
    if (this.hangingNumbers.has(message.credentials.sender)) {
      await new Promise<void>((resolve) => this.#hung.push(resolve));
    }
    return { kind: 'accepted', providerMessageId: `wamid.${message.messageId}` };
  }

  release(): void {
    this.hangingNumbers.clear();
    for (const resolve of this.#hung.splice(0)) resolve();
  }

  async submitTemplate(): Promise<never> {
    throw new Error('not used');
  }

  async checkTemplate(): Promise<never> {
    throw new Error('not used');
  }

  async checkAccount(): Promise<never> {
    throw new Error('not used');
  }

  async deleteTemplate(): Promise<never> {
    throw new Error('not used');
  }

  start(): void {}
  async stop(): Promise<void> {}
}

/** A provider that answers each call only when told to, one at a time, oldest first; counts how many wait at once. */
class GatedProvider extends ScriptedProvider {
  #waiting: (() => void)[] = [];
  mostAtOnce = 0;

  get waiting(): number {
    return this.#waiting.length;
  }

  override async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    this.calls.push({ messageId: message.messageId, phoneNumberId: message.credentials.sender, at: Date.now() });
    await new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.mostAtOnce = Math.max(this.mostAtOnce, this.#waiting.length);
    });
    return { kind: 'accepted', providerMessageId: `wamid.${message.messageId}` };
  }

  answerOne(): void {
    this.#waiting.shift()?.();
  }
}

for (const kind of databaseKinds()) {
  describe(`dispatcher (${kind})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    const running: Dispatcher[] = [];

    before(async () => {
      testDb = await createTestDatabase(kind);
      database = openDatabase(testDb.url, { poolSize: 6 });
      await migrateToLatest(database.db);
    });

    after(async () => {
      await Promise.all(running.map((dispatcher) => dispatcher.stop()));
      await database.close();
      await testDb.drop();
    });

    function startDispatcher(provider: Provider, options: Partial<DispatcherOptions> = {}, env: Record<string, string> = {}) {
      const config = loadConfig({ SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, SVC_PROVIDER_MAX_MPS: '1000', ...env });
      const deps = {
        config,
        database,
        logger: silent,
        metrics: createMetricsRegistry(),
        provider,
        notifier: new Notifier(database, silent),
        encryptionKey: KEY,
      };
      const dispatcher = new Dispatcher(deps, createSendRateGate(database), { maxInFlight: 500, ...options });
      dispatcher.start();
      running.push(dispatcher);
      return dispatcher;
    }

    let projects = 0;
    /** A project that sends from `phoneNumberId`, at `messagesPerSecond` if given. */
    async function project(phoneNumberId: string, messagesPerSecond: number | null = null): Promise<string> {
      const now = Date.now();
      const id = `proj_dispatch_${kind}_${++projects}`;
      await database.db
        .insertInto('projects')
        .values(
          testProjectRow(id, {
            provider_phone_number_id: phoneNumberId,
            provider_access_token_enc: sealSecret(KEY, 'EAAG-token'),
            webhook_secret_enc: sealSecret(KEY, 'whsec_x'),
            credentials_updated_at: now,
            provider_messages_per_second: messagesPerSecond,
            created_at: now,
            updated_at: now,
          }),
        )
        .execute();
      return id;
    }

    async function queue(projectId: string, count: number): Promise<string[]> {
      const now = Date.now();
      const rows = Array.from({ length: count }, (_, i) =>
        queuedMessageRow(
          {
            projectId,
            to: `+55119${String(40_000_000 + i)}`,
            template: { id: 'tpl_x', name: 'notice', language: 'en', category: 'UTILITY' },
            variables: { '1': String(i) },
            content: { body: `Notice ${i}` },
          },
          now,
        ),
      );
      for (let i = 0; i < rows.length; i += 500) await database.db.insertInto('messages').values(rows.slice(i, i + 500)).execute();
      return rows.map((row) => row.id);
    }

    async function statusOf(id: string): Promise<string> {
      const row = await database.db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      return row.status;
    }

    async function countQueued(projectId: string): Promise<number> {
      const rows = await database.db
        .selectFrom('messages')
        .select('id')
        .where('project_id', '=', projectId)
        .where('status', '=', 'QUEUED')
        .execute();
      return rows.length;
    }

    it('a hanging submission holds only its own slot: another number’s messages go on being sent', async () => {
      const provider = new ScriptedProvider();
      provider.hangingNumbers.add('1000001');
      const stuck = await project('1000001');
      const other = await project('1000002');
      const [stuckMessage] = await queue(stuck, 1);
      const dispatcher = startDispatcher(provider);
      await until('the first submission to hang', () => provider.hanging === 1);
      const others = await queue(other, 20);
      dispatcher.wake();
      for (const id of others) await until(`message ${id} SENT`, async () => (await statusOf(id)) === 'SENT');
      assert.equal(await statusOf(stuckMessage!), 'QUEUED', 'the hanging one is still in flight');
      assert.equal(provider.hanging, 1);
      provider.release();
      await until('the released message SENT', async () => (await statusOf(stuckMessage!)) === 'SENT');
      assert.equal(provider.calls.filter((call) => call.messageId === stuckMessage).length, 1, 'submitted once');
      await dispatcher.stop();
    });

    it('a project’s backlog does not hold back another project’s first message', async () => {
      const provider = new ScriptedProvider();
      const busy = await project('2000001', 20);
      await queue(busy, 2000);
      const dispatcher = startDispatcher(provider);
      await until('the backlog to start sending', () => provider.calls.length > 0);
      const quiet = await project('2000002', 20);
      const [first] = await queue(quiet, 1);
      dispatcher.wake();
      await until('the quiet project’s message SENT', async () => (await statusOf(first!)) === 'SENT');
      const backlog = await countQueued(busy);
      // 20 a second: the quiet project's message went out within the first few seconds of a
      // backlog that takes 100 s to drain.
      assert.ok(backlog >= 1800, `sent while the backlog was still ${backlog} deep`);
      const busySent = provider.calls.filter((call) => call.phoneNumberId === '2000001');
      const perSecond = new Map<number, number>();
      for (const call of busySent) perSecond.set(Math.floor(call.at / 1000), (perSecond.get(Math.floor(call.at / 1000)) ?? 0) + 1);
      assert.ok(Math.max(...perSecond.values()) <= 20, 'the busy number kept to its own 20 a second');
      await dispatcher.stop();
      await database.db.deleteFrom('messages').where('project_id', '=', busy).execute();
    });

    it('projects left out of a claim for lack of room are claimed at once when the room dealt went unused', async () => {
      // Each project is dealt up to its lane's target (5) but holds 2: a claim of room 10 deals it to
      // 2 projects and takes 4 messages. The 28 others must not wait for the poll (10 minutes here).
      const provider = new ScriptedProvider();
      const ids: string[] = [];
      for (let n = 0; n < 30; n++) ids.push(...(await queue(await project(String(5_100_000 + n)), 2)));
      const dispatcher = startDispatcher(provider, { maxWaiting: 10, claimLimit: 5, pollMs: 600_000 });
      for (const id of ids) await until(`message ${id} SENT`, async () => (await statusOf(id)) === 'SENT');
      assert.equal(provider.calls.length, ids.length, 'each sent once');
      await dispatcher.stop();
    });

    it('keeps to its in-flight limit however many numbers have messages waiting', async () => {
      const provider = new GatedProvider();
      const ids: string[] = [];
      for (let n = 0; n < 20; n++) ids.push(...(await queue(await project(String(5_000_000 + n)), 2)));
      const dispatcher = startDispatcher(provider, { maxInFlight: 3 });
      // Each answer frees one slot: whatever the order, never more than 3 submissions wait at once.
      while (provider.calls.length < ids.length || provider.waiting > 0) {
        await until('a submission', () => provider.waiting > 0);
        provider.answerOne();
      }
      for (const id of ids) await until(`message ${id} SENT`, async () => (await statusOf(id)) === 'SENT');
      assert.equal(provider.calls.length, ids.length, 'each sent once');
      assert.ok(provider.mostAtOnce <= 3, `at most 3 in flight (saw ${provider.mostAtOnce})`);
      await dispatcher.stop();
    });

    it('a project that just got work takes the next free slot before the numbers already waiting', async () => {
      const provider = new GatedProvider();
      for (let n = 0; n < 10; n++) await queue(await project(String(6_000_000 + n)), 5);
      const dispatcher = startDispatcher(provider, { maxInFlight: 2 });
      await until('both slots taken', () => provider.waiting === 2);
      const newcomer = await project('6000100');
      const [first] = await queue(newcomer, 1);
      dispatcher.wake([newcomer]);
      await until('the newcomer claimed, beside the 48 waiting', () => dispatcher.waiting === 49);
      const callsBefore = provider.calls.length;
      provider.answerOne();
      await until('the freed slot used', () => provider.calls.length > callsBefore);
      assert.equal(provider.calls[callsBefore]!.messageId, first, 'the newcomer went first, ahead of 48 waiting messages');
      while (provider.waiting > 0 || (await countQueuedAll()) > 0) {
        if (provider.waiting > 0) provider.answerOne();
        else await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await dispatcher.stop();
    });

    async function countQueuedAll(): Promise<number> {
      const rows = await database.db.selectFrom('messages').select('id').where('status', '=', 'QUEUED').execute();
      return rows.length;
    }

    it('renews the lease of a submission that outlasts it, so no other worker takes the message', async () => {
      const provider = new ScriptedProvider();
      provider.hangingNumbers.add('3000001');
      const owner = await project('3000001');
      const [id] = await queue(owner, 1);
      // Renewed every second; only a 3 s stall of the event loop could let the lease lapse. Watched
      // until three leases were seen, however long the machine takes (the bound is not a measure).
      const dispatcher = startDispatcher(provider, { leaseMs: 4000 });
      await until('the submission to hang', () => provider.hanging === 1);
      const leases: number[] = [];
      const bound = Date.now() + 60_000;
      while (new Set(leases).size < 3 && Date.now() < bound) {
        const row = await database.db
          .selectFrom('messages')
          .select(['lease_expires_at'])
          .where('id', '=', id!)
          .executeTakeFirstOrThrow();
        leases.push(row.lease_expires_at!);
        assert.ok(row.lease_expires_at! > Date.now(), 'the lease never lapses while the call is in flight');
        const taken = await claimProjectHeads(database.db, 'messages', {
          now: Date.now(),
          leaseMs: 60_000,
          quotas: new Map([[owner, 10]]),
        });
        assert.deepEqual(taken, [], 'another worker finds nothing to claim');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(new Set(leases).size >= 3, `the lease was renewed (${new Set(leases).size} distinct leases seen)`);
      provider.release();
      await until('SENT', async () => (await statusOf(id!)) === 'SENT');
      assert.equal(provider.calls.length, 1, 'submitted once');
      await dispatcher.stop();
    });

    it('gives back what waits when it stops, and a message whose worker died is taken over when its lease ends', async () => {
      const provider = new ScriptedProvider();
      const owner = await project('4000001', 1);
      const ids = await queue(owner, 3);
      const first = startDispatcher(provider, { leaseMs: 60_000 });
      await until('one submission', () => provider.calls.length === 1);
      await first.stop();
      const rows = await database.db
        .selectFrom('messages')
        .select(['id', 'status', 'lease_expires_at', 'due_at'])
        .where('id', 'in', ids)
        .execute();
      const waiting = rows.filter((row) => row.status === 'QUEUED');
      assert.equal(waiting.length, 2, 'two were waiting for the 1-a-second pace');
      for (const row of waiting) assert.equal(row.lease_expires_at, null, 'given back, not left leased for a minute');

      // A worker that dies holds its claims until their lease ends; then another takes them over.
      const now = Date.now();
      await database.db.updateTable('messages').set({ due_at: now + 600, lease_expires_at: now + 600 }).where('id', 'in', waiting.map((row) => row.id)).execute();
      const second = startDispatcher(provider, {}, { SVC_PROVIDER_MAX_MPS: '1000' });
      await until('the orphans SENT', async () => {
        for (const row of waiting) if ((await statusOf(row.id)) !== 'SENT') return false;
        return true;
      });
      const takenAt = provider.calls.filter((call) => waiting.some((row) => row.id === call.messageId)).map((call) => call.at);
      assert.ok(Math.min(...takenAt) >= now + 600, 'not before the dead worker’s lease ended');
      await second.stop();
    });
  });
}
