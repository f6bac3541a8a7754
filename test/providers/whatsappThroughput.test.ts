import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendPaceOf } from '../../src/domain/sendPace.ts';
import { loadConfig } from '../../src/config.ts';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import type { TestServer } from '../support/server.ts';
import { accountWebhook, connectedProject, PHONE_NUMBER_ID, postWebhook, startWhatsApp, until, type WhatsAppSetup } from '../support/whatsapp.ts';

// Meta's throughput upgrade (throughput.mdx, phone_number_quality_update): once a number is
// upgraded to 1,000 messages/s, Meta posts `event: THROUGHPUT_UPGRADE` with
// `max_daily_conversations_per_business: TIER_UNLIMITED`; svc reads the number again and paces it
// by its new tier, without waiting for the hourly refresh.

describe('send pace of a number', () => {
  const unset = loadConfig({});
  const capped = loadConfig({ SVC_PROVIDER_MAX_MPS: '500' });
  it('is the provider’s throughput once known, SVC_PROVIDER_MAX_MPS (default 80) before', () => {
    assert.equal(unset.providerMaxMpsIsCap, false);
    assert.equal(sendPaceOf(null, unset), 80);
    assert.equal(sendPaceOf(80, unset), 80);
    assert.equal(sendPaceOf(1000, unset), 1000, 'an upgraded number goes at its tier');
    assert.equal(sendPaceOf(20, unset), 20, 'a coexistence number at its 20');
  });
  it('never exceeds SVC_PROVIDER_MAX_MPS when the operator sets it', () => {
    assert.equal(capped.providerMaxMpsIsCap, true);
    assert.equal(sendPaceOf(1000, capped), 500);
    assert.equal(sendPaceOf(80, capped), 80);
    assert.equal(sendPaceOf(null, capped), 500);
  });
});

for (const kind of databaseKinds()) {
  describe(`WhatsApp throughput upgrade (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
    });
    after(() => setup.close());

    const pace = async (projectId: string) =>
      (await server.app.database.db.selectFrom('projects').select('provider_messages_per_second').where('id', '=', projectId).executeTakeFirstOrThrow())
        .provider_messages_per_second;

    it('re-reads the number on THROUGHPUT_UPGRADE and raises its pace to 1,000 within seconds', async () => {
      fake.phoneNumber(PHONE_NUMBER_ID)!.throughput.level = 'STANDARD';
      const { key, projectId } = await connectedProject(server);
      assert.equal(await pace(projectId), 80);
      assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.provider.messagesPerSecond, 80);
      const readsBefore = fake.of('phone_number').length;

      fake.phoneNumber(PHONE_NUMBER_ID)!.throughput.level = 'HIGH';
      const hook = accountWebhook('phone_number_quality_update', {
        display_phone_number: '15550783881',
        event: 'THROUGHPUT_UPGRADE',
        max_daily_conversations_per_business: 'TIER_UNLIMITED',
      });
      assert.equal((await postWebhook(server, hook)).status, 200);
      // No refresh is run by hand: the worker, woken by the webhook, reads the number (else it
      // would wait for its next poll, a minute away).
      await until('the upgraded throughput recorded', async () => (await pace(projectId)) === 1000);
      assert.ok(fake.of('phone_number').length > readsBefore, 'the number was read again');
      const me = (await server.call('GET', '/v1/projects/me', { key })).body;
      assert.equal(me.provider.messagesPerSecond, 1000);
    });

    it('changes nothing for an account of no project here', async () => {
      const hook = accountWebhook(
        'phone_number_quality_update',
        { display_phone_number: '15550000000', event: 'THROUGHPUT_UPGRADE', max_daily_conversations_per_business: 'TIER_UNLIMITED' },
        '999999999999999',
      );
      const readsBefore = fake.of('phone_number').length;
      assert.equal((await postWebhook(server, hook)).status, 200);
      assert.equal(fake.of('phone_number').length, readsBefore);
    });
  });
}
