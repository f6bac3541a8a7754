import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { claimProjectHeads, queuedProjectsAfter } from '../../src/db/claims.ts';
import { listEventsAfter } from '../../src/db/events.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { readHourlyCounts } from '../../src/db/messageCounts.ts';
import { readCosts } from '../../src/db/messageCosts.ts';
import { listReconciliations } from '../../src/db/costReconciliations.ts';
import { listMessageEvents, listMessages, type MessageFilter, type MessageRow } from '../../src/db/messages.ts';
import { FAMILIES, holdsWorkInFlight, partitionsOf } from '../../src/db/partitions.ts';
import {
  claimWebhookDeliveries,
  type DeliveryFilter,
  listDeliveriesForMessage,
  listWebhookDeliveries,
  type WebhookDeliveryRow,
} from '../../src/db/webhookDeliveries.ts';
import { withPayloads } from '../../src/db/webhookPayloads.ts';
import { currentTemplateCategories } from '../../src/db/marketingMessages.ts';
import { deleteStaleLinks, linkedIdentities } from '../../src/db/recipientLinks.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { idLowerBound } from '../../src/domain/ids.ts';
import { BULK_SPACING_MS, BULK_START, bulkDeliveryId, bulkMessageId, OLD_TENANT, projectIdOf, seedBulk } from '../support/bulkSeed.ts';
import { describePlan, explainingDb, type ExplainingDb, type PlanNode, planNodes, type RecordedPlan } from '../support/queryPlans.ts';

// Every page a tenant reads walks an index keyed by its project, in the order the page returns
// rows, on a database large enough for the planner to choose (and with statistics on PostgreSQL;
// SQLite gets none, as svc never analyzes it): many tenants, and one whose messages are the oldest,
// so a plan that walks a global index backwards and filters by project would read every other
// tenant's rows first. What is asserted is the plan, never a time.

// 20,000 messages in `npm test`; `SVC_TEST_PLAN_MESSAGES=1000000` runs the same assertions at a
// million (each message with its 3 events, 3 deliveries and 3 attempts: ten million rows).
const SHAPE = { projects: 10, messages: Number(process.env.SVC_TEST_PLAN_MESSAGES ?? 20_000), oldTenantMessages: 2_000, deliveryBacklog: 2_000 };
// The old tenant's messages are 1…2,000: a cursor deep in its history, and the time filters' bounds.
const AN_OLD_MESSAGE = bulkMessageId(1_900);
const AN_OLD_DELIVERY = bulkDeliveryId(1_900, 2);
const timeOf = (n: number) => BULK_START + n * BULK_SPACING_MS;
const BIG_TABLES = ['messages', 'message_events', 'webhook_deliveries', 'webhook_attempts', 'message_counts', 'message_costs'];

/** Asserts the statement reads `table` through one of `indexes`, in order (no sort), and never scans a big table. */
function assertWalks(
  recorded: RecordedPlan,
  table: string,
  indexes: readonly string[],
  options: {
    /** The rows read are sorted after (a message's few events), not walked in order. */
    sorted?: boolean;
    /** SQLite's name for the table in this statement. */
    alias?: string;
    /**
     * PostgreSQL may read the rows through a bitmap of the index, or merge its time partitions'
     * walks (migration 0028) by a sort, and sort them: for a filter that matches few rows by its
     * statistics, where it reads just those rows.
     */
    bitmap?: boolean;
  } = {},
): void {
  const description = `${recorded.sql}\n  plan: ${describePlan(recorded.plan)}`;
  if (Array.isArray(recorded.plan)) {
    const lines = recorded.plan;
    const name = options.alias ?? table;
    const reads = lines.filter((line) => new RegExp(`^(SEARCH|SCAN) ${name}( |$)`).test(line));
    assert.ok(reads.length > 0, `reads ${table}: ${description}`);
    for (const line of reads) {
      const index = /USING (?:COVERING )?INDEX (\w+)/.exec(line)?.[1] ?? (/USING (INTEGER )?PRIMARY KEY/.test(line) ? 'primary key' : undefined);
      assert.ok(line.startsWith('SEARCH') && index !== undefined && indexes.includes(index), `${table} through ${indexes.join('|')}: ${description}`);
    }
    if (!options.sorted) assert.ok(!lines.some((line) => line.includes('TEMP B-TREE')), `no sort: ${description}`);
    for (const big of BIG_TABLES) assert.ok(!lines.some((line) => line === `SCAN ${big}` || line.startsWith(`SCAN ${big} `)), `no scan of ${big}: ${description}`);
    return;
  }
  const root = recorded.plan;
  const scans = ['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan'];
  const reads = planNodes(root).filter((node) => node['Relation Name'] === table && scans.includes(node['Node Type']));
  assert.ok(reads.length > 0, `reads ${table}: ${description}`);
  for (const read of reads) {
    const bitmap = read['Node Type'] === 'Bitmap Heap Scan';
    const indexNodes = bitmap ? planNodes(read).filter((node) => node['Node Type'] === 'Bitmap Index Scan') : [read];
    assert.ok(!bitmap || options.bitmap, `an ordered index scan, not a bitmap: ${description}`);
    for (const node of indexNodes) {
      assert.ok(node['Node Type'] !== 'Seq Scan' && indexes.includes(node['Index Name'] ?? ''), `${table} through ${indexes.join('|')}: ${description}`);
      assert.match(node['Index Cond'] ?? '', /project_id|message_id/, `keyed by its project or message: ${description}`);
    }
    // No sort between the read and the page's limit (the page itself may be sorted above it).
    const path = pathTo(root, read)!;
    const limitAt = path.map((node) => node['Node Type']).lastIndexOf('Limit');
    const below = limitAt >= 0 ? path.slice(limitAt + 1) : path;
    if (!options.sorted && !options.bitmap) assert.ok(!below.some((node) => node['Node Type'] === 'Sort'), `no sort: ${description}`);
  }
  for (const big of BIG_TABLES) {
    assert.ok(!planNodes(root).some((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === big), `no scan of ${big}: ${description}`);
  }
}

/**
 * The feed's read of status events among the plans it recorded: it reads replies beside them, the
 * two statements in parallel, so the order they are recorded in is not theirs.
 */
function feedEventsPlan(plans: RecordedPlan[]): RecordedPlan {
  const read = plans.find((plan) => / from message_events /.test(plan.sql));
  assert.ok(read, `no read of message_events among: ${plans.map((plan) => plan.sql).join('; ')}`);
  return read;
}

/** The nodes from `root` down to `target`, both included. */
function pathTo(root: PlanNode, target: PlanNode): PlanNode[] | undefined {
  if (root === target) return [root];
  for (const child of root.Plans ?? []) {
    const path = pathTo(child, target);
    if (path) return [root, ...path];
  }
  return undefined;
}

/** The index a statement reads `alias` through (undefined: a scan). */
function indexOfAlias(recorded: RecordedPlan, alias: string): string | undefined {
  if (Array.isArray(recorded.plan)) {
    const line = recorded.plan.find((detail) => new RegExp(`^(SEARCH|SCAN) ${alias} `).test(detail));
    return line?.startsWith('SEARCH') ? /USING (?:COVERING )?INDEX (\w+)/.exec(line)?.[1] : undefined;
  }
  const node = planNodes(recorded.plan).find((n) => n.Alias === alias && n['Relation Name'] !== undefined);
  return node && node['Node Type'] !== 'Seq Scan' ? node['Index Name'] : undefined;
}

/** The webhook worker's claim: candidates (`q`) from the project's queue, earlier events (`e`) by their message. */
async function assertClaimWalks(explaining: ExplainingDb, database: Database, projectId: string, now: number): Promise<void> {
  await claimWebhookDeliveries(explaining.db, { now, leaseMs: 30_000, quotas: new Map([[projectId, 50], [projectIdOf(2), 50]]) });
  const claim = explaining.take().find((plan) => /^\s*update "?webhook_deliveries/.test(plan.sql))!;
  const description = `${claim.sql}\n  plan: ${describePlan(claim.plan)}`;
  assert.equal(indexOfAlias(claim, 'q'), 'webhook_deliveries_queue', description);
  assert.equal(indexOfAlias(claim, 'e'), 'webhook_deliveries_by_message', description);
  assertOnlyProjectListScanned(claim, description);
}

/** SQLite claims many projects in one statement: the only table it scans is their JSON list (`w`). */
function assertOnlyProjectListScanned(claim: RecordedPlan, description: string): void {
  if (!Array.isArray(claim.plan)) return;
  assert.ok(!claim.plan.some((line) => /^SCAN (?!w VIRTUAL TABLE)/.test(line)), `no scan but the projects' list: ${description}`);
}

for (const kind of databaseKinds()) {
  describe(`query plans at scale (${kind})`, () => {
    let database: Database;
    let explaining: ExplainingDb;
    const one = async (run: (db: ExplainingDb['db']) => Promise<unknown>): Promise<RecordedPlan[]> => {
      await run(explaining.db);
      return explaining.take();
    };

    before(async () => {
      const testDb = await createTestDatabase(kind);
      database = openDatabase(testDb.url, { poolSize: 2 });
      await migrateToLatest(database.db);
      await seedBulk(database, SHAPE);
      explaining = explainingDb(database);
    });
    after(async () => {
      await explaining?.close();
      await database?.close();
    });

    const messagesByProject = kind === 'postgres' ? ['messages_pkey'] : ['messages_by_project'];
    const messageLists: [string, MessageFilter, string[], { bitmap?: boolean }?][] = [
      ['no filter', {}, messagesByProject],
      ['status', { status: 'FAILED' }, ['messages_by_project_status']],
      ['recipient', { to: '+15550000100' }, ['messages_by_project_recipient'], { bitmap: true }],
      ['template', { template: 'promo' }, ['messages_by_project_template']],
      ['since', { since: timeOf(100) }, messagesByProject],
      ['until', { until: timeOf(1_950) }, messagesByProject],
      ['status and since', { status: 'READ', since: timeOf(100) }, ['messages_by_project_status', ...messagesByProject]],
    ];
    for (const [name, filter, indexes, options] of messageLists) {
      it(`GET /v1/messages, ${name}: the project's own index, newest first`, async () => {
        for (const beforeId of [undefined, AN_OLD_MESSAGE]) {
          const plans = await one((db) => listMessages(db, 'no-such-key-hash', OLD_TENANT, filter, { limit: 50, ...(beforeId && { beforeId }) }));
          const read = plans.find((plan) => /from messages/.test(plan.sql))!;
          assertWalks(read, 'messages', indexes, options);
        }
      });
    }

    it('GET /v1/messages/{id}/events: the message’s own events and deliveries', async () => {
      const message = { id: AN_OLD_MESSAGE, project_id: OLD_TENANT } as MessageRow;
      const [events] = await one((db) => listMessageEvents(db, message));
      // SQLite: the table is keyed (message_id, id) (migration 0025), its own index by message;
      // PostgreSQL: an index of the message id alone, the message's few events sorted.
      assertWalks(events!, 'message_events', [kind === 'postgres' ? 'message_events_by_message' : 'primary key'], { sorted: kind === 'postgres', bitmap: true });
      const [deliveries] = await one((db) => listDeliveriesForMessage(db, OLD_TENANT, AN_OLD_MESSAGE));
      assertWalks(deliveries!, 'webhook_deliveries', ['webhook_deliveries_by_message'], { sorted: kind === 'postgres' });
    });

    // Keyed (project_id, id) on both: PostgreSQL's primary key index; SQLite's table itself (WITHOUT ROWID, migration 0026).
    const deliveriesByProject = kind === 'postgres' ? ['webhook_deliveries_pkey'] : ['primary key'];
    // The old tenant has no delivery due; a tenant among the newest has a backlog of them.
    const BACKLOGGED = projectIdOf(1);
    const A_BACKLOG_DELIVERY = bulkDeliveryId(SHAPE.messages - 100, 2);
    const deliveryLists: [string, Omit<DeliveryFilter, 'limit'>, string[], { bitmap?: boolean; backlogged?: boolean }?][] = [
      ['no filter', {}, deliveriesByProject],
      ['status failed', { status: 'failed' }, ['webhook_deliveries_failed_by_id']],
      ['status pending', { status: 'pending' }, ['webhook_deliveries_due_by_id'], { backlogged: true }],
      ['status succeeded', { status: 'succeeded' }, deliveriesByProject],
      ['a common event', { event: 'message.read' }, deliveriesByProject],
      ['a rare event', { event: 'message.failed' }, ['webhook_deliveries_rare_events'], { bitmap: true }],
      ['since', { since: timeOf(100) }, deliveriesByProject],
      ['until', { until: timeOf(1_950) }, deliveriesByProject],
      ['message', { messageId: AN_OLD_MESSAGE }, ['webhook_deliveries_by_message']],
    ];
    for (const [name, filter, indexes, options] of deliveryLists) {
      it(`GET /v1/webhook-deliveries, ${name}: an index in the page's order`, async () => {
        const [tenant, cursor] = options?.backlogged ? [BACKLOGGED, A_BACKLOG_DELIVERY] : [OLD_TENANT, AN_OLD_DELIVERY];
        for (const before of [undefined, cursor]) {
          const [read] = await one((db) => listWebhookDeliveries(db, tenant, { limit: 51, ...filter, ...(before && { before }) }));
          assertWalks(read!, 'webhook_deliveries', indexes, { ...options, sorted: name === 'message' && kind === 'postgres' });
        }
      });
    }

    it('the webhook worker’s claim: the project’s due deliveries by its queue, earlier events by their message', async () => {
      // A backlog of 2,000 messages' deliveries is due (the seed's newest); a claim must read the
      // project's head through its queue index and, for each candidate, look for an earlier event
      // of the same message through that message's index — never walk the project's pending rows.
      await assertClaimWalks(explaining, database, BACKLOGGED, timeOf(SHAPE.messages + 1));
    });

    // PostgreSQL's time partitions (db/partitions.ts): before a period is dropped, and again under
    // the drop's lock, its work in flight is looked for through the queues' partial indexes, which
    // hold only due rows, or (the pending deliveries about its messages) through the index by
    // message within the period's range of message ids — deliveries the shorter delivery
    // retention has mostly removed by the time the period ends: never a walk of the period's
    // rows. The seed is in the first partition (at a million, also in the default one).
    it('a period’s drop: its work in flight through the queues’ partial indexes', async (t) => {
      if (kind !== 'postgres') return t.skip('SQLite has no time partitions');
      for (const family of FAMILIES) {
        const period = (await partitionsOf(database.db, family.lead.table)).find((partition) => partition.from === undefined)!;
        const plans = await one((db) => holdsWorkInFlight(db, family, period));
        assert.equal(plans.length, family.name === 'messages' ? 2 : 1);
        const queues = ['messages_queue', 'webhook_deliveries_queue', 'webhook_deliveries_due_by_id'];
        for (const recorded of plans) {
          const description = `${recorded.sql}\n  plan: ${describePlan(recorded.plan)}`;
          const reads = planNodes(recorded.plan as PlanNode).filter((node) => BIG_TABLES.includes(node['Relation Name'] ?? '') && !node['Node Type'].startsWith('Empty'));
          assert.ok(reads.length > 0, description);
          for (const read of reads) {
            const indexes = read['Node Type'] === 'Bitmap Heap Scan' ? planNodes(read).map((node) => node['Index Name']).filter(Boolean) : [read['Index Name']];
            const byPeriodMessages = read['Index Name'] === 'webhook_deliveries_by_message' && /message_id </.test(read['Index Cond'] ?? '');
            assert.ok(byPeriodMessages || (indexes.length > 0 && indexes.every((index) => queues.includes(index ?? ''))), `through a queue's index: ${description}`);
          }
        }
      }
    });

    it('a delivery’s body rebuilt from its event: each event by its message’s index, each message by its key', async () => {
      // What the webhook worker reads for each claim, and GET /v1/webhook-deliveries/{id}: no
      // index of events by id alone (PostgreSQL has none since migration 0023).
      const rows = ([1, 2, 3] as const).map(
        (k) =>
          ({
            id: bulkDeliveryId(1_900, k),
            project_id: OLD_TENANT,
            event_id: `evt_${String(1_900).padStart(25, '0')}${k}`,
            message_id: AN_OLD_MESSAGE,
            event: 'message.read',
            payload: '',
          }) as WebhookDeliveryRow,
      );
      const [read] = await one((db) => withPayloads(db, rows));
      const eventsRead = kind === 'postgres' ? ['message_events_by_message', 'message_events_by_project'] : ['primary key'];
      assertWalks(read!, 'message_events', eventsRead, { alias: 'e', sorted: true, bitmap: true });
      // Each message by its key: (project_id, id), or its id alone (PostgreSQL's hash index).
      const messagesRead = kind === 'postgres' ? ['messages_pkey', 'messages_by_id'] : ['messages_by_project', 'sqlite_autoindex_messages_1'];
      const description = `${read!.sql}\n  plan: ${describePlan(read!.plan)}`;
      assert.ok(messagesRead.includes(indexOfAlias(read!, 'm') ?? ''), `messages through ${messagesRead.join('|')}: ${description}`);
    });

    it('GET /v1/events: the project’s events in id order, each message by its key', async () => {
      // The small old tenant's first page: at a million messages PostgreSQL once read all its events and sorted them.
      const read = feedEventsPlan(await one((db) => listEventsAfter(db, OLD_TENANT, '', 100)));
      assertWalks(read, 'message_events', ['message_events_by_project']);
      const messagesRead = kind === 'postgres' ? ['messages_pkey', 'messages_by_id'] : ['messages_by_project', 'sqlite_autoindex_messages_1'];
      assertWalks(read, 'messages', messagesRead, { alias: 'm' });
    });

    describe('a young tenant', () => {
      // 2,000 messages with their events, all newer than every other project's: a tenant that
      // started last week. Reading its feed from a cursor, the id range's share of the table (its
      // newest 1 %) times the project's share once estimated a handful of rows where every row of
      // the tenant matches: a bitmap and a sort of them all, O(tenant), where a page is O(page).
      const YOUNG = 'proj_young000000';
      const youngTime = () => BULK_START + (SHAPE.messages + 1_000) * BULK_SPACING_MS;
      let firstEvent = '';
      before(async () => {
        const { db } = database;
        await db.insertInto('projects').values({ id: YOUNG, name: 'young', owner_email: 'owner@example.com', webhook_secret_enc: 'x', created_at: 0, updated_at: 0 }).execute();
        const prefix = (id: string) => `${id.slice(0, 4)}${idLowerBound('msg', youngTime()).slice(4)}`;
        const source = await db.selectFrom('messages').selectAll().where('project_id', '=', projectIdOf(1)).orderBy('id', 'desc').limit(2_000).execute();
        const events = await db.selectFrom('message_events').selectAll().where('message_id', 'in', source.map((m) => m.id)).execute();
        const renamed = (id: string) => prefix(id) + id.slice(14);
        for (let start = 0; start < source.length; start += 500) {
          await db.insertInto('messages').values(source.slice(start, start + 500).map((m) => ({ ...m, id: renamed(m.id), project_id: YOUNG }))).execute();
        }
        const youngEvents = events.map((e) => ({ ...e, id: renamed(e.id), message_id: renamed(e.message_id), project_id: YOUNG }));
        for (let start = 0; start < youngEvents.length; start += 500) await db.insertInto('message_events').values(youngEvents.slice(start, start + 500)).execute();
        firstEvent = youngEvents.map((e) => e.id).sort()[0]!;
        if (kind === 'postgres') await sql`analyze messages, message_events`.execute(db);
      });

      it('GET /v1/events from a cursor: the project’s events in id order, never all of them sorted', async () => {
        const read = feedEventsPlan(await one((db) => listEventsAfter(db, YOUNG, firstEvent, 100)));
        assertWalks(read, 'message_events', ['message_events_by_project']);
      });
    });

    describe('recipient identities (BSUIDs)', () => {
      // 10,000 users with a phone and a BSUID each, over the ten projects, both directions.
      before(async () => {
        const rows = [];
        for (let i = 0; i < 10_000; i++) {
          const common = { project_id: projectIdOf(i % 10), source: 'status', created_at: timeOf(i), seen_at: timeOf(i) };
          const phone = `+1555${String(i).padStart(7, '0')}`;
          rows.push({ ...common, identity: phone, linked: `US.${i}` }, { ...common, identity: `US.${i}`, linked: phone });
        }
        for (let start = 0; start < rows.length; start += 1_000) {
          await database.db.insertInto('recipient_links').values(rows.slice(start, start + 1_000)).execute();
        }
        if (kind === 'postgres') await sql`analyze recipient_links`.execute(database.db);
      });
      const linksIndexes = ['recipient_links_pk', 'sqlite_autoindex_recipient_links_1'];

      it('a recipient’s joined identities: the project’s primary-key range', async () => {
        const [read] = await one((db) => linkedIdentities(db, OLD_TENANT, ['+15550000100', 'US.100']));
        assertWalks(read!, 'recipient_links', linksIndexes, { sorted: true, bitmap: true });
      });

      it('GET /v1/messages?to= over joined identities: the recipient index, for that recipient’s messages only', async () => {
        // (The explaining database answers plans, not rows: the joined identities are given.)
        const filter = { to: 'US.100', toJoined: ['US.100', '+15550000100', 'US.ENT.100'] };
        const plans = await one((db) => listMessages(db, 'no-such-key-hash', OLD_TENANT, filter, { limit: 50 }));
        assert.match(plans.find((plan) => /from messages/.test(plan.sql))!.sql, /recipient in \(/);
        const read = plans.find((plan) => /from messages/.test(plan.sql))!;
        // A handful of identities, each one index range; their rows (one person's messages) are sorted.
        assertWalks(read, 'messages', ['messages_by_project_recipient'], { sorted: true, bitmap: true });
      });

      it('the retention purge of links: the project’s links by last sight', async () => {
        const plans = await one((db) => deleteStaleLinks(db, OLD_TENANT, timeOf(5_000), 100));
        for (const plan of plans) {
          assertWalks(plan, 'recipient_links', ['recipient_links_by_seen', ...linksIndexes], { sorted: true, bitmap: true });
        }
      });

      it('the dispatcher’s look at templates’ current category: by id within the project', async () => {
        const [read] = await one((db) => currentTemplateCategories(db, OLD_TENANT, ['tpl_bulk']));
        assertWalks(read!, 'templates', ['templates_pkey', 'sqlite_autoindex_templates_1', 'templates_by_project', 'templates_name_language'], {
          sorted: true,
          bitmap: true,
        });
      });
    });

    it('GET /v1/analytics: the project’s hourly counts in the range', async () => {
      const [read] = await one((db) =>
        readHourlyCounts(db, OLD_TENANT, { from: timeOf(100), to: timeOf(600), by: 'status' }),
      );
      assertWalks(read!, 'message_counts', ['message_counts_pk', 'sqlite_autoindex_message_counts_1'], { sorted: true, bitmap: true });
    });

    it('GET /v1/analytics/cost: the project’s cost counters of the range’s days, and its reconciliations', async () => {
      // Cost counters of every tenant over ~2 years of days: one row per message's day, template,
      // category and country (the bulk messages stand in for deliveries).
      const DAY = 86_400_000;
      await sql`insert into message_costs (project_id, day, template, category, country, market, currency, charged, amount_micros, free, unpriced)
        select project_id, ((queued_at / 600000) % 700) * ${DAY}, template_name,
          case when length(id) % 2 = 0 then 'marketing' else 'utility' end, 'BR', 'Brazil', 'USD', count(*), count(*) * 62500, 0, 0
        from messages group by 1, 2, 3, 4`.execute(database.db);
      await sql`insert into cost_reconciliations (project_id, day, checked_at, currency, meta_messages, meta_amount_micros, svc_messages, svc_amount_micros, differences)
        select distinct project_id, day, 0, 'USD', 0, 0, 0, 0, '[]' from message_costs`.execute(database.db);
      await sql`analyze message_costs`.execute(database.db);
      await sql`analyze cost_reconciliations`.execute(database.db);
      const [rows] = await sql<{ n: number | string }>`select count(*) as n from message_costs`.execute(database.db).then((r) => r.rows);
      assert.ok(Number(rows!.n) >= 7_000, `a big counter table (${rows!.n} rows)`);
      const range = { from: 100 * DAY, to: 131 * DAY };
      for (const by of [['day'], ['market', 'category'], ['day', 'template', 'category', 'market', 'country']] as const) {
        const [read] = await one((db) => readCosts(db, OLD_TENANT, { ...range, by }));
        assertWalks(read!, 'message_costs', ['message_costs_pk', 'sqlite_autoindex_message_costs_1'], { sorted: true, bitmap: true });
      }
      const [reconciled] = await one((db) => listReconciliations(db, OLD_TENANT, range));
      assertWalks(reconciled!, 'cost_reconciliations', ['cost_reconciliations_pk', 'sqlite_autoindex_cost_reconciliations_1'], { bitmap: true });
    });
  });
}

// A database just created has no statistics (PostgreSQL's autovacuum has not analyzed it yet;
// SQLite never has any): the planner chooses by the schema alone, and the worker's statements
// must still walk the intended indexes — a burst right after start is when they matter.
for (const kind of databaseKinds()) {
  describe(`query plans on a fresh database (${kind})`, () => {
    let database: Database;
    let explaining: ExplainingDb;
    before(async () => {
      const testDb = await createTestDatabase(kind);
      database = openDatabase(testDb.url, { poolSize: 2 });
      await migrateToLatest(database.db);
      explaining = explainingDb(database);
    });
    after(async () => {
      await explaining?.close();
      await database?.close();
    });

    it('the webhook worker’s claim: the project’s due deliveries by its queue, earlier events by their message', async () => {
      await assertClaimWalks(explaining, database, projectIdOf(1), Date.now());
    });

    it('the dispatcher’s claim and both workers’ page of queued projects: the queue indexes', async () => {
      await claimProjectHeads(explaining.db, 'messages', { now: Date.now(), leaseMs: 30_000, quotas: new Map([[projectIdOf(1), 50], [projectIdOf(2), 50]]) });
      const claim = explaining.take().find((plan) => /^\s*update "?messages/.test(plan.sql))!;
      assert.equal(indexOfAlias(claim, 'q'), 'messages_queue', `${claim.sql}\n  plan: ${describePlan(claim.plan)}`);
      assertOnlyProjectListScanned(claim, `${claim.sql}\n  plan: ${describePlan(claim.plan)}`);
      for (const table of ['messages', 'webhook_deliveries'] as const) {
        await queuedProjectsAfter(explaining.db, table, '', 100);
        const [page] = explaining.take();
        const plan = describePlan(page!.plan);
        assert.ok(plan.includes(`${table}_queue`), `${table}: ${plan}`);
        assert.ok(!new RegExp(`(SCAN|(?<!Empty )Seq Scan) (q|${table})( |$)`).test(plan), `no scan: ${plan}`);
      }
    });
  });
}
