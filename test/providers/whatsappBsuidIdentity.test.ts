import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import { inboundReportsOf } from '../../src/providers/whatsapp/inboundMessages.ts';
import { connectedProject, PHONE_NUMBER_ID, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { inboundId, messagesWebhook, seconds } from '../support/whatsappInbound.ts';
import { approvedWhatsAppTemplate, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// One WhatsApp user, several identities (business-scoped-user-ids.mdx): a phone number and the
// BSUID Meta gives it (statuses: `recipient_id` and `recipient_user_id`; inbound: `from` and
// `from_user_id`), and a new BSUID when the user changes number (`user_changed_user_id`). svc
// joins them per project, so filters and suppressions by any identity find the others' history.

const BODY = { template: 'order_shipped', language: 'en_US', variables: { '1': 'Ana', '2': 'A-1' } };

function userChangedUserId(oldUserId: string, newUserId: string, phone = '') {
  return messagesWebhook([
    {
      from: phone,
      from_user_id: oldUserId,
      id: inboundId(),
      timestamp: seconds(),
      type: 'system',
      system: { body: `User Ana changed from ${oldUserId} to ${newUserId}`, wa_id: phone, user_id: newUserId, type: 'user_changed_user_id' },
    },
  ]);
}

describe('Meta’s payloads naming a user’s identities', () => {
  it('reads user_changed_user_id: the old id from from_user_id or the body, the new one, the phone when given', () => {
    const [change] = inboundReportsOf(userChangedUserId('US.1', 'US.2', '5511987654321')).userIdChanges;
    assert.deepEqual({ ...change, occurredAt: 0 }, { phoneNumberId: PHONE_NUMBER_ID, oldUserId: 'US.1', newUserId: 'US.2', phone: '+5511987654321', occurredAt: 0 });
    const payload = userChangedUserId('US.3', 'US.4') as any;
    delete payload.entry[0].changes[0].value.messages[0].from_user_id;
    const [fromBody] = inboundReportsOf(payload).userIdChanges;
    assert.equal(fromBody!.oldUserId, 'US.3');
    assert.equal(fromBody!.newUserId, 'US.4');
    assert.ok(!('phone' in fromBody!));
    payload.entry[0].changes[0].value.messages[0].system.user_id = 'not an id';
    assert.deepEqual(inboundReportsOf(payload).userIdChanges, []);
  });

  it('keys a sender who hides the number by the BSUID, and keeps the BSUID beside a phone', () => {
    const hidden = inboundReportsOf(messagesWebhook([{ from: '', from_user_id: 'US.9', id: 'wamid.a', timestamp: seconds(), type: 'text', text: { body: 'hi' } }]));
    assert.equal(hidden.messages[0]!.from, 'US.9');
    assert.ok(!('fromUserId' in hidden.messages[0]!));
    const both = inboundReportsOf(messagesWebhook([{ from: '5511987654321', from_user_id: 'US.9', id: 'wamid.b', timestamp: seconds(), type: 'text', text: { body: 'hi' } }]));
    assert.equal(both.messages[0]!.from, '+5511987654321');
    assert.equal(both.messages[0]!.fromUserId, 'US.9');
  });
});

for (const kind of databaseKinds()) {
  describe(`a WhatsApp user's identities joined (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'order_shipped');
    });
    after(() => setup.close());

    const listed = async (to: string, asKey = key) =>
      ((await server.call('GET', `/v1/messages?to=${encodeURIComponent(to)}`, { key: asKey })).body as any[]).map((message) => message.id).sort();

    /** Sends, and has Meta's `delivered` status name the recipient's identities. */
    async function delivered(to: string, named: { recipient_id: string; recipient_user_id?: string }) {
      const id = await sendTemplate(server, key, 'order_shipped', to);
      const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
      assert.equal((await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'delivered', id, named)]))).status, 200);
      return waitForStatus(server, key, id, 'DELIVERED');
    }

    it('records the BSUID a status names beside the phone sent to, and the phone beside a BSUID; filters by either find both', async () => {
      const phone = '+5511987654001';
      const bsuid = 'BR.5511987654001abc';
      const toPhone = await delivered(phone, { recipient_id: phone.slice(1), recipient_user_id: bsuid });
      assert.equal(toPhone.to, phone);
      assert.equal(toPhone.recipientUserId, bsuid);
      assert.ok(!('recipientPhoneNumber' in toPhone));
      const toBsuid = await delivered(bsuid, { recipient_id: phone.slice(1), recipient_user_id: bsuid });
      assert.equal(toBsuid.to, bsuid, 'the spec’s echo of the request');
      assert.equal(toBsuid.recipientPhoneNumber, phone);
      assert.ok(!('recipientUserId' in toBsuid));
      const both = [toPhone.id, toBsuid.id].sort();
      assert.deepEqual(await listed(phone), both);
      assert.deepEqual(await listed(bsuid), both);
      // Paging still works over the joined identities.
      const page = await server.call('GET', `/v1/messages?to=${encodeURIComponent(bsuid)}&limit=1`, { key });
      assert.equal(page.body.length, 1);
      assert.match(page.headers.get('link') ?? '', /rel="next"/);
      // A user who hides the number: recipient_id empty, only the BSUID — nothing to join.
      const hidden = await delivered('US.77700011', { recipient_id: '', recipient_user_id: 'US.77700011' });
      assert.ok(!('recipientPhoneNumber' in hidden) && !('recipientUserId' in hidden));
      assert.deepEqual(await listed('US.77700011'), [hidden.id]);
    });

    it('suppressions by one identity refuse sends to the others', async () => {
      const phone = '+5511987654002';
      const bsuid = 'BR.5511987654002abc';
      await delivered(phone, { recipient_id: phone.slice(1), recipient_user_id: bsuid });
      const added = await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: bsuid, reason: 'asked by chat' } });
      assert.ok(added.status === 200 || added.status === 201, added.text);
      const refused = await server.call('POST', '/v1/messages', { key, body: { to: phone, ...BODY } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'recipient_suppressed');
      const batch = await server.call('POST', '/v1/messages/batch', {
        key,
        body: { template: 'order_shipped', language: 'en_US', items: [{ to: phone, variables: BODY.variables }, { to: '+5511987654099', variables: BODY.variables }] },
      });
      assert.ok(JSON.stringify(batch.body).includes('recipient_suppressed'), batch.text);
    });

    it('user_changed_user_id joins the new BSUID to the old one: history, filters and suppressions follow', async () => {
      const oldId = 'US.1000000000000000001';
      const newId = 'US.1000000000000000002';
      const before = await delivered(oldId, { recipient_id: '', recipient_user_id: oldId });
      assert.equal((await postWebhook(server, userChangedUserId(oldId, newId))).status, 200);
      await until('joined', async () => ((await listed(newId)).includes(before.id) ? true : undefined));
      const afterId = await sendTemplate(server, key, 'order_shipped', newId);
      await waitForStatus(server, key, afterId, 'SENT');
      const both = [before.id, afterId].sort();
      assert.deepEqual(await listed(oldId), both);
      assert.deepEqual(await listed(newId), both);
      // A suppression of the old id holds for the new one, and the other way round.
      await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: oldId, reason: 'stop' } });
      const refused = await server.call('POST', '/v1/messages', { key, body: { to: newId, ...BODY } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'recipient_suppressed');
    });

    it('joins a phone and its BSUID from an inbound message, and a username user’s STOP suppresses their BSUID', async () => {
      const bsuid = 'MX.4455667788';
      const stop = messagesWebhook([{ from: '', from_user_id: bsuid, id: inboundId(), timestamp: seconds(), type: 'text', text: { body: 'STOP' } }]);
      assert.equal((await postWebhook(server, stop)).status, 200);
      const suppressed = await until('suppressed', async () => {
        const reply = await server.call('POST', '/v1/messages', { key, body: { to: bsuid, ...BODY } });
        return reply.status === 422 ? reply : undefined;
      });
      assert.equal(suppressed.body.code, 'recipient_suppressed');
      // The same user later writes with the number shown: the phone joins the BSUID, and is refused too.
      const hello = messagesWebhook([{ from: '5511987654005', from_user_id: bsuid, id: inboundId(), timestamp: seconds(), type: 'text', text: { body: 'hola' } }]);
      assert.equal((await postWebhook(server, hello)).status, 200);
      const refused = await until('joined', async () => {
        const reply = await server.call('POST', '/v1/messages', { key, body: { to: '+5511987654005', ...BODY } });
        return reply.status === 422 ? reply : undefined;
      });
      assert.equal(refused.body.code, 'recipient_suppressed');
    });

    it('keeps each project’s identities its own', async () => {
      const phone = '+5511987654003';
      const bsuid = 'BR.5511987654003abc';
      await delivered(phone, { recipient_id: phone.slice(1), recipient_user_id: bsuid });
      await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: bsuid, reason: 'x' } });
      const other = await server.createProject();
      await server.call('POST', '/v1/suppressions', { key: other.key, body: { phoneNumber: '+5511999999999', reason: 'so the check runs' } });
      assert.deepEqual(await listed(bsuid, other.key), []);
      assert.deepEqual(await listed(phone, other.key), []);
      const rows = await server.app.database.db.selectFrom('recipient_links').select('project_id').where('identity', '=', bsuid).execute();
      assert.ok(rows.length > 0 && rows.every((row) => row.project_id !== other.projectId));
    });

    it('idempotency keys work with a BSUID: a replay answers the original, another recipient is a reuse', async () => {
      const body = { to: 'US.5550001112', ...BODY };
      const first = await server.call('POST', '/v1/messages', { key, body, headers: { 'idempotency-key': 'bsuid-1' } });
      assert.equal(first.status, 202, first.text);
      const replay = await server.call('POST', '/v1/messages', { key, body, headers: { 'idempotency-key': 'bsuid-1' } });
      assert.equal(replay.status, 202);
      assert.equal(replay.body.id, first.body.id);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      const other = await server.call('POST', '/v1/messages', { key, body: { ...body, to: 'US.5550001113' }, headers: { 'idempotency-key': 'bsuid-1' } });
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'idempotency_key_reused');
      await waitForStatus(server, key, first.body.id, 'SENT');
    });

    it('explains 131062 (an authentication template to a BSUID) in the failure', async () => {
      const { graphError } = await import('../support/fakeGraphApi.ts');
      fake.failNext('send', graphError(400, 131062, 'Business-scoped User ID recipients are not supported for this message.', 'Business-scoped User ID recipients are not supported for this message.'));
      const id = await sendTemplate(server, key, 'order_shipped', 'US.5550001114');
      const failed = await waitForStatus(server, key, id, 'FAILED');
      assert.equal(failed.error.code, '131062');
      assert.match(failed.error.message, /go to phone numbers only: send this one to the user's phone number/);
    });

    it('erasing the project erases its joined identities', async () => {
      const project = await connectedProject(server);
      await approvedWhatsAppTemplate(server, fake, project.key, 'order_shipped_two');
      const id = await sendTemplate(server, project.key, 'order_shipped_two', '+5511987654004');
      const { providerMessageId } = await waitForStatus(server, project.key, id, 'SENT');
      await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'delivered', id, { recipient_id: '5511987654004', recipient_user_id: 'BR.erase1' })]));
      await waitForStatus(server, project.key, id, 'DELIVERED');
      const count = async () =>
        (await server.app.database.db.selectFrom('recipient_links').select('identity').where('project_id', '=', project.projectId).execute()).length;
      assert.equal(await count(), 2);
      const erased = await server.call('DELETE', '/v1/projects/me', { key: project.key });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(await count(), 0);
    });
  });
}
