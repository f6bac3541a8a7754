import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { graphError } from '../support/fakeGraphApi.ts';
import { until } from '../support/until.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// A send whose answer was lost (Meta had it, svc saw a 5xx or a timeout) is retried on the
// schedule. Every send names svc's message id in biz_opaque_callback_data, which Meta echoes in
// its status webhooks: a status that arrives before the retry confirms the send, and the message
// is never submitted again. The schedule here is an hour, so the webhook always comes first.

for (const kind of databaseKinds()) {
  describe(`a send confirmed by Meta's status webhook before its retry (${kind})`, () => {
    let setup: WhatsAppSetup;
    before(async () => {
      setup = await startWhatsApp(kind, { env: { SVC_SEND_RETRY_SCHEDULE: '1h' } });
    });
    after(() => setup.close());

    it('records SENT from the webhook and never submits the message again', async () => {
      const { server, fake } = setup;
      const project = await connectedProject(server);
      await approvedWhatsAppTemplate(server, fake, project.key, 'order_update_unknown');
      fake.failNext('send', graphError(500, 1, 'An unknown error occurred', 'An unknown error occurred.'));
      const id = await sendTemplate(server, project.key, 'order_update_unknown');
      await until('the failed attempt is recorded', async () => (await messageRow(server, id)).attempts === 1);
      const waiting = await messageRow(server, id);
      assert.equal(waiting.status, 'QUEUED');
      assert.ok(waiting.due_at! > Date.now() + 30 * 60_000, 'the retry waits for the schedule');
      assert.equal(fake.sends().filter((request) => request.body?.biz_opaque_callback_data === id).length, 1);

      // Meta had the message: its webhook names svc's id (and the wamid svc never saw).
      const reply = await postWebhook(server, statusWebhook([metaStatus('wamid.confirmed-late', 'sent', id)]));
      assert.equal(reply.status, 200);
      const confirmed = await until('SENT from the webhook', async () => {
        const row = await messageRow(server, id);
        return row.status === 'SENT' ? row : undefined;
      });
      assert.equal(confirmed.provider_message_id, 'wamid.confirmed-late');
      assert.equal(confirmed.due_at, null, 'nothing left to retry');
      const view = await server.call('GET', `/v1/messages/${id}`, { key: project.key });
      assert.equal(view.body.status, 'SENT');
      assert.equal(view.body.providerMessageId, 'wamid.confirmed-late');
      assert.equal(fake.sends().filter((request) => request.body?.biz_opaque_callback_data === id).length, 1, 'submitted once');
    });
  });
}
