import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { recordProviderAccountRefresh } from '../../src/db/providerAccounts.ts';
import { createProviderAccountJob } from '../../src/workers/providerAccounts.ts';
import { databaseKinds } from '../support/databases.ts';
import {
  embeddedSignupToken,
  FAKE_WABA_ID,
  type FakeGraphApi,
  graphError,
  OTHER_WABA_ID,
  systemUserToken,
  userToken,
} from '../support/fakeGraphApi.ts';
import type { TestServer } from '../support/server.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';
import { accountWebhook, CREDENTIALS, PHONE_NUMBER_ID, postWebhook, startWhatsApp, TOKEN, until, type WhatsAppSetup } from '../support/whatsapp.ts';

// Saving WhatsApp credentials: checked with Meta for every kind of token, the business account
// found or verified, svc's app subscribed to it, the number described and its throughput kept.

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const BODY = { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped today.' };
let numbers = 0;

for (const kind of databaseKinds()) {
  describe(`WhatsApp onboarding (${kind})`, () => {
    const logLines: string[] = [];
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;

    /** A number of its own for each test, in `waba`, reachable with a new token of the given kind. */
    function newNumber(waba = FAKE_WABA_ID, fields = {}) {
      const phoneNumberId = `10654035224${String(++numbers).padStart(4, '0')}`;
      fake.addPhoneNumber(waba, phoneNumberId, fields);
      return phoneNumberId;
    }

    function save(key: string, body: Record<string, unknown>) {
      return server.call('PUT', CREDENTIALS, { key, body });
    }

    function register(key: string, name = 'order_update') {
      return server.call('POST', '/v1/templates', { key, body: { name, language: 'en_US', category: 'UTILITY', components: [BODY] } });
    }

    async function projectRow(projectId: string) {
      return server.app.database.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
    }

    function refreshJob() {
      const { database, provider, logger } = server.app;
      return createProviderAccountJob({ database, provider, logger, encryptionKey: Buffer.from(TEST_ENCRYPTION_KEY, 'base64') });
    }

    /** Time passes: every account is due for its refresh, which then runs. */
    async function refreshNow(projectId: string) {
      await server.app.database.db.updateTable('provider_accounts').set({ check_due_at: 0 }).where('project_id', '=', projectId).execute();
      await refreshJob().runOnce(Date.now());
    }

    before(async () => {
      setup = await startWhatsApp(kind, {
        env: { SVC_PROVIDER_MAX_MPS: '500' },
        logger: pino({ level: 'trace' }, { write: (line: string) => logLines.push(line) }),
      });
      ({ fake, server } = setup);
      fake.addPhoneNumber(OTHER_WABA_ID, '106540399990001');
    });
    after(() => setup.close());

    describe('business account', () => {
      it('with a system-user token (no target_ids), asks for the WABA id instead of leaving templates PENDING forever', async () => {
        const phoneNumberId = newNumber();
        const token = `EAAG-system-${phoneNumberId}`;
        fake.tokens.set(token, systemUserToken([FAKE_WABA_ID]));
        const { key } = await server.createProject();
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        assert.equal(saved.status, 200, saved.text);
        const { provider } = saved.body;
        assert.equal(provider.status, 'action_required');
        assert.equal(provider.businessAccountId, null);
        assert.equal(provider.problem.code, 'business_account_not_found');
        assert.match(provider.problem.message, /providerBusinessAccountId/);
        assert.equal(provider.webhooksSubscribed, false);
        assert.deepEqual((await server.call('GET', '/v1/projects/me', { key })).body.provider, provider);
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.providerName, 'whatsapp', 'no sandbox badge here');

        const refused = await register(key);
        assert.equal(refused.status, 422, refused.text);
        assert.equal(refused.body.code, 'provider_setup_incomplete');
        assert.match(refused.body.detail, /providerBusinessAccountId/);
        assert.equal(fake.of('create_template').length, 0, 'nothing reached Meta');
        assert.deepEqual((await server.call('GET', '/v1/templates', { key })).body, [], 'nothing was registered');

        // The id alone completes the saved credentials: verified against the account's numbers.
        const completed = await save(key, { providerBusinessAccountId: FAKE_WABA_ID });
        assert.equal(completed.status, 200, completed.text);
        assert.equal(completed.body.provider.status, 'ready');
        assert.equal(completed.body.provider.businessAccountId, FAKE_WABA_ID);
        assert.equal(completed.body.provider.webhooksSubscribed, true);
        assert.ok(fake.of('phone_numbers').some((request) => request.path === `/${fake.apiVersion}/${FAKE_WABA_ID}/phone_numbers`));
        const created = await register(key);
        assert.equal(created.status, 200, created.text);
        const submitted = fake.of('create_template').at(-1)!;
        assert.equal(submitted.path, `/${fake.apiVersion}/${FAKE_WABA_ID}/message_templates`);
        assert.equal(submitted.authorization, `Bearer ${token}`);
      });

      it('with an Embedded Signup token, finds the WABA under whatsapp_business_manage_events', async () => {
        const phoneNumberId = newNumber();
        const token = `EAAG-es-${phoneNumberId}`;
        fake.tokens.set(token, embeddedSignupToken(FAKE_WABA_ID));
        const { key } = await server.createProject();
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        assert.equal(saved.status, 200, saved.text);
        assert.equal(saved.body.provider.status, 'ready', JSON.stringify(saved.body.provider));
        assert.equal(saved.body.provider.businessAccountId, FAKE_WABA_ID);
        const debug = fake.of('debug_token').at(-1)!;
        assert.equal(debug.query.get('input_token'), token);
        assert.equal((await register(key)).status, 200);
      });

      it('with a token of several WABAs, picks the one that has the number, across pages of numbers', async () => {
        const waba = '102290129341234';
        for (let i = 0; i < 130; i++) fake.addPhoneNumber(waba, `20000000000${String(i).padStart(4, '0')}`);
        const phoneNumberId = newNumber(waba);
        const token = `EAAG-user-${phoneNumberId}`;
        fake.tokens.set(token, userToken([OTHER_WABA_ID, waba]));
        const { key } = await server.createProject();
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        assert.equal(saved.status, 200, saved.text);
        assert.equal(saved.body.provider.businessAccountId, waba);
        assert.ok(fake.subscribed(waba));
        assert.ok(fake.of('phone_numbers').some((request) => request.path.includes(waba) && request.query.get('after') !== null), 'paged');
      });

      it('names a given WABA that does not have the number, or that the token cannot read', async () => {
        const phoneNumberId = newNumber();
        const { key } = await server.createProject();
        const mismatch = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: OTHER_WABA_ID });
        assert.equal(mismatch.status, 200, mismatch.text);
        fake.tokens.set(TOKEN, systemUserToken([FAKE_WABA_ID, OTHER_WABA_ID]));
        try {
          const again = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: OTHER_WABA_ID });
          assert.equal(again.body.provider.problem.code, 'business_account_mismatch');
          assert.match(again.body.provider.problem.message, new RegExp(`${phoneNumberId} is not in WhatsApp Business Account ${OTHER_WABA_ID}`));
        } finally {
          fake.tokens.set(TOKEN, systemUserToken([FAKE_WABA_ID]));
        }
        assert.equal(mismatch.body.provider.problem.code, 'business_account_inaccessible');
        assert.match(mismatch.body.provider.problem.message, /200 Permissions error/);
        assert.equal(mismatch.body.provider.businessAccountId, null);
        assert.equal((await register(key)).body.code, 'provider_setup_incomplete');
      });

      it('keeps the known WABA when the token of the same number is rotated', async () => {
        const phoneNumberId = newNumber();
        const { key } = await server.createProject();
        await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        const rotated = `EAAG-rotated-${phoneNumberId}`;
        fake.tokens.set(rotated, systemUserToken([FAKE_WABA_ID]));
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: rotated });
        assert.equal(saved.body.provider.status, 'ready', JSON.stringify(saved.body.provider));
        assert.equal(saved.body.provider.businessAccountId, FAKE_WABA_ID);
      });
    });

    describe('webhook subscription', () => {
      it('subscribes svc’s app to the WABA, so statuses arrive', async () => {
        const waba = '102290129345678';
        const phoneNumberId = newNumber(waba);
        const token = `EAAG-sub-${phoneNumberId}`;
        fake.tokens.set(token, embeddedSignupToken(waba));
        const { key } = await server.createProject();
        assert.equal(fake.subscribed(waba), false);
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        assert.equal(saved.body.provider.webhooksSubscribed, true);
        assert.ok(fake.subscribed(waba));
        const subscribe = fake.of('subscribe').at(-1)!;
        assert.equal(subscribe.path, `/${fake.apiVersion}/${waba}/subscribed_apps`);
        assert.equal(subscribe.authorization, `Bearer ${token}`);
      });

      it('says what to do when Meta refuses the subscription', async () => {
        const phoneNumberId = newNumber();
        const { key } = await server.createProject();
        fake.failNext('subscribe', graphError(403, 200, 'Permissions error', 'The user does not have permission to subscribe.'));
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        assert.equal(saved.status, 200, saved.text);
        assert.equal(saved.body.provider.status, 'action_required');
        assert.equal(saved.body.provider.webhooksSubscribed, false);
        assert.equal(saved.body.provider.problem.code, 'webhook_subscription_failed');
        assert.match(saved.body.provider.problem.message, /statuses and template reviews will not arrive/);
        // The business account is known: templates still go through.
        assert.equal((await register(key)).status, 200);
        // The hourly refresh subscribes again.
        await refreshNow(saved.body.projectId);
        const me = (await server.call('GET', '/v1/projects/me', { key })).body;
        assert.equal(me.provider.status, 'ready');
        assert.equal(me.provider.webhooksSubscribed, true);
      });
    });

    describe('the number', () => {
      it('shows its display name, verified name, quality and throughput, and paces by its tier', async () => {
        const phoneNumberId = newNumber(FAKE_WABA_ID, {
          display_phone_number: '+1 555-078-3881',
          verified_name: 'Lucky Shrub',
          quality_rating: 'YELLOW',
          throughput: { level: 'STANDARD' },
        });
        const { key, projectId } = await server.createProject();
        const saved = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        assert.deepEqual({ ...saved.body.provider, checkedAt: undefined }, {
          status: 'ready',
          businessAccountId: FAKE_WABA_ID,
          displayPhoneNumber: '+1 555-078-3881',
          verifiedName: 'Lucky Shrub',
          qualityRating: 'YELLOW',
          messagesPerSecond: 80,
          webhooksSubscribed: true,
          checkedAt: undefined,
        });
        assert.match(saved.body.provider.checkedAt, ISO_MS);
        assert.equal((await projectRow(projectId)).provider_messages_per_second, 80);
        const numberRead = fake.of('phone_number').at(-1)!;
        assert.match(numberRead.query.get('fields')!, /throughput/);

        // Meta upgrades the number (1,000 mps): its webhook wakes the account worker, which reads it again.
        fake.phoneNumber(phoneNumberId)!.throughput.level = 'HIGH';
        fake.phoneNumber(phoneNumberId)!.quality_rating = 'GREEN';
        const hook = accountWebhook('phone_number_quality_update', { display_phone_number: '15550783881', event: 'THROUGHPUT_UPGRADE', current_limit: 'TIER_UNLIMITED' });
        assert.equal((await postWebhook(server, hook)).status, 200);
        await until('the upgrade recorded', async () => (await projectRow(projectId)).provider_messages_per_second === 1000);
        const me = (await server.call('GET', '/v1/projects/me', { key })).body;
        assert.equal(me.provider.messagesPerSecond, 500, 'never above SVC_PROVIDER_MAX_MPS');
        assert.equal(me.provider.qualityRating, 'GREEN');
      });

      it('refreshes periodically: an expired token becomes the problem, an outage changes nothing', async () => {
        const phoneNumberId = newNumber();
        const token = `EAAG-expiring-${phoneNumberId}`;
        fake.tokens.set(token, systemUserToken([FAKE_WABA_ID]));
        const { key, projectId } = await server.createProject();
        await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token, providerBusinessAccountId: FAKE_WABA_ID });

        fake.failNext('phone_number', graphError(503, 2, 'Service temporarily unavailable', 'Try again later.'));
        const before = Date.now();
        await refreshNow(projectId);
        const afterOutage = await server.app.database.db.selectFrom('provider_accounts').selectAll().where('project_id', '=', projectId).executeTakeFirstOrThrow();
        assert.equal(afterOutage.problem, null);
        assert.ok(afterOutage.check_due_at >= before + 4 * 60_000 && afterOutage.check_due_at < before + 3_600_000, 'asked again sooner');

        fake.tokens.delete(token);
        await refreshNow(projectId);
        const me = (await server.call('GET', '/v1/projects/me', { key })).body;
        assert.equal(me.provider.status, 'action_required');
        assert.equal(me.provider.problem.code, 'token_rejected');
        assert.match(me.provider.problem.message, /190/);
        assert.equal(me.providerPhoneNumberId, phoneNumberId, 'the credentials stay as saved');
      });

      it('checks accounts saved before these checks existed, and lets their templates through meanwhile', async () => {
        const phoneNumberId = newNumber();
        const token = `EAAG-legacy-${phoneNumberId}`;
        fake.tokens.set(token, embeddedSignupToken(FAKE_WABA_ID));
        const { key, projectId } = await server.createProject();
        await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        // As the migration leaves it: nothing known yet.
        await server.app.database.db
          .updateTable('provider_accounts')
          .set({ checked_at: null, business_account_id: null, display_phone_number: null, problem: null, check_due_at: 0 })
          .where('project_id', '=', projectId)
          .execute();
        const unchecked = (await server.call('GET', '/v1/projects/me', { key })).body.provider;
        assert.equal(unchecked.status, 'unchecked');
        assert.equal(unchecked.checkedAt, null);
        assert.equal((await register(key)).status, 200);
        await refreshJob().runOnce(Date.now());
        // This run, or the background worker's if it claimed the account first.
        const checked = await until('the account checked', async () => {
          const provider = (await server.call('GET', '/v1/projects/me', { key })).body.provider;
          return provider.status === 'ready' ? provider : undefined;
        });
        assert.equal(checked.businessAccountId, FAKE_WABA_ID);
      });

      it('discards a refresh of credentials replaced meanwhile', async () => {
        const phoneNumberId = newNumber();
        const { key, projectId } = await server.createProject();
        await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        const row = await server.app.database.db.selectFrom('provider_accounts').selectAll().where('project_id', '=', projectId).executeTakeFirstOrThrow();
        const stale = await recordProviderAccountRefresh(server.app.database.db, projectId, row.credentials_updated_at - 1, {
          check_due_at: 0,
          problem: '{"code":"token_rejected","message":"stale"}',
        });
        assert.equal(stale, false);
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.provider.status, 'ready');
      });
    });

    describe('errors', () => {
      it('refuses a wrong token with 422 naming Meta’s error, and saves nothing', async () => {
        const { key } = await server.createProject();
        const wrong = 'EAAG-never-issued-' + 'x'.repeat(40);
        const reply = await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: wrong, callbackUrl: 'https://127.0.0.1/h' });
        assert.equal(reply.status, 422, reply.text);
        assert.equal(reply.body.code, 'provider_credentials_rejected');
        assert.match(reply.body.detail, /access token/);
        assert.match(reply.body.detail, /190 \(Error validating access token\)/);
        assert.match(reply.body.detail, /fbtrace_id A[0-9a-f]{16}/);
        assert.ok(!reply.text.includes(wrong));
        const me = (await server.call('GET', '/v1/projects/me', { key })).body;
        assert.ok(!('providerPhoneNumberId' in me) && !('provider' in me) && !('callbackUrl' in me));
      });

      it('refuses a phone number id the token cannot see, keeping the credentials saved before', async () => {
        const phoneNumberId = newNumber();
        const { key } = await server.createProject();
        await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        for (const id of ['999999999999999', '106540399990001']) {
          const reply = await save(key, { providerPhoneNumberId: id, providerAccessToken: TOKEN });
          assert.equal(reply.status, 422, reply.text);
          assert.equal(reply.body.code, 'provider_credentials_rejected');
          assert.match(reply.body.detail, new RegExp(`phone number id ${id}`));
          assert.match(reply.body.detail, /100 \(Invalid parameter\)/);
        }
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.providerPhoneNumberId, phoneNumberId);
      });

      it('refuses a token without whatsapp_business_messaging', async () => {
        const phoneNumberId = newNumber();
        const token = `EAAG-readonly-${phoneNumberId}`;
        fake.tokens.set(token, systemUserToken([FAKE_WABA_ID], ['whatsapp_business_management']));
        const { key } = await server.createProject();
        const reply = await save(key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: token });
        assert.equal(reply.status, 422);
        assert.match(reply.body.detail, /lacks the whatsapp_business_messaging permission/);
      });

      it('answers 503 when the Graph API is down, and saves nothing', async () => {
        const { key } = await server.createProject();
        for (const answer of [
          graphError(500, 131000, 'Something went wrong', 'Unknown error.'),
          graphError(400, 4, 'Application request limit reached', 'Too many calls.'),
          { status: 502, body: 'Bad gateway' },
        ]) {
          fake.failNext('phone_number', answer);
          const reply = await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: TOKEN });
          assert.equal(reply.status, 503, reply.text);
          assert.equal(reply.body.code, 'unavailable');
          assert.equal(reply.headers.get('retry-after'), '30');
        }
        fake.failNext('subscribe', graphError(503, 2, 'Service temporarily unavailable', 'Later.'));
        const late = await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID });
        assert.equal(late.status, 503);
        assert.ok(!('providerPhoneNumberId' in (await server.call('GET', '/v1/projects/me', { key })).body));
      });
    });

    describe('security', () => {
      it('never echoes or logs the token, even in Meta’s refusals', async () => {
        const { key } = await server.createProject();
        const secret = 'EAAG-secret-' + 'z'.repeat(48);
        const replies = [
          await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: secret }),
          await save(key, { providerPhoneNumberId: 'not a number', providerAccessToken: secret }),
        ];
        fake.tokens.set(secret, systemUserToken([FAKE_WABA_ID]));
        replies.push(await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: secret, providerBusinessAccountId: FAKE_WABA_ID }));
        replies.push(await server.call('GET', '/v1/projects/me', { key }));
        assert.deepEqual(replies.map((reply) => reply.status), [422, 400, 200, 200]);
        for (const reply of replies) assert.ok(!reply.text.includes(secret), reply.text);
        assert.ok(!logLines.join('').includes(secret), 'the token is in a log line');
      });

      it('refuses hostile business account ids before asking Meta', async () => {
        const { key } = await server.createProject();
        const before = fake.requests.length;
        for (const id of ['../../me', '1 OR 1=1', '102290129340398/phone_numbers', '', 'x'.repeat(65), '１２３']) {
          const reply = await save(key, { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: TOKEN, providerBusinessAccountId: id });
          assert.equal(reply.status, 400, id);
          assert.equal(reply.body.errors[0].field, '/providerBusinessAccountId');
        }
        assert.equal(fake.requests.length, before, 'Meta was not asked');
      });

      it('another project’s business account is Meta’s to refuse: nothing of it is shown', async () => {
        const phoneNumberId = newNumber(OTHER_WABA_ID);
        const theirs = `EAAG-theirs-${phoneNumberId}`;
        fake.tokens.set(theirs, systemUserToken([OTHER_WABA_ID]));
        const owner = await server.createProject('owner');
        await save(owner.key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: theirs, providerBusinessAccountId: OTHER_WABA_ID });
        const intruder = await server.createProject('intruder');
        const reply = await save(intruder.key, { providerPhoneNumberId: phoneNumberId, providerAccessToken: TOKEN, providerBusinessAccountId: OTHER_WABA_ID });
        assert.equal(reply.status, 422, 'the intruder’s token cannot see the number');
        const ownerView = (await server.call('GET', '/v1/projects/me', { key: owner.key })).body.provider;
        assert.equal(ownerView.status, 'ready');
        assert.ok(!('provider' in (await server.call('GET', '/v1/projects/me', { key: intruder.key })).body));
      });
    });
  });
}
