import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// Meta's business portfolio pacing (templates/portfolio-pacing): a message may be taken but held
// for quality assessment (`message_status: held_for_quality_assessment`), then released in
// batches (a `sent` status) or dropped (a `failed` status with 132015).

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const kind of databaseKinds()) {
  describe(`messages held for quality assessment (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
      fake.portfolioPacing = true;
    });
    after(() => setup.close());

    async function heldMessage(to: string) {
      const sendsBefore = fake.sends().length;
      const id = await sendTemplate(server, key, 'spring_sale', to);
      const row = await until(`${id} held`, async () => {
        const found = await messageRow(server, id);
        return found.held_at !== null ? found : undefined;
      });
      assert.equal(fake.sends().length - sendsBefore, 1);
      return { id, wamid: row.provider_message_id! };
    }

    async function metric(event: string): Promise<number> {
      const text = (await server.call('GET', '/metrics')).text;
      const line = text.split('\n').find((candidate) => candidate.startsWith(`svc_provider_held_messages_total{event="${event}"}`));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    }

    it('shows a held message as QUEUED with held and heldAt, not sent again, not cancelable; released, it is SENT', async () => {
      const heldBefore = await metric('held');
      const releasedBefore = await metric('released');
      const { id, wamid } = await heldMessage('+5511987650021');
      assert.ok(fake.held.includes(wamid));
      const shown = (await server.call('GET', `/v1/messages/${id}`, { key })).body;
      assert.equal(shown.status, 'QUEUED', 'the spec’s status set: not sent yet');
      assert.equal(shown.held, true);
      assert.match(shown.heldAt, ISO_MS);
      assert.equal(shown.providerMessageId, wamid);
      assert.equal(shown.sentAt, null);
      const row = await messageRow(server, id);
      assert.equal(row.due_at, null, 'not the dispatcher’s to send again');
      assert.equal(row.attempts, 1);
      const listed = (await server.call('GET', '/v1/messages?status=QUEUED', { key })).body.find((message: any) => message.id === id);
      assert.equal(listed.held, true);
      const cancel = await server.call('POST', `/v1/messages/${id}/cancel`, { key });
      assert.equal(cancel.status, 409, cancel.text);
      assert.equal(cancel.body.code, 'message_not_cancelable');
      assert.equal(await metric('held'), heldBefore + 1);

      // Meta releases it: its `sent` status (with the pricing) moves it on as usual.
      await postWebhook(server, statusWebhook([metaStatus(wamid, 'sent', id, { pricing: metaPricing('marketing') })]));
      const sent = await waitForStatus(server, key, id, 'SENT');
      assert.equal(sent.held, false);
      assert.equal(sent.heldAt, shown.heldAt, 'when it was held stays known');
      assert.equal(sent.pricing.category, 'marketing');
      const events = (await server.call('GET', `/v1/messages/${id}/events`, { key })).body.map((event: any) => event.status);
      assert.deepEqual(events, ['QUEUED', 'SENT']);
      assert.equal(await metric('released'), releasedBefore + 1);
    });

    it('a held message Meta drops is FAILED with 132015 and its reason, never SENT', async () => {
      const droppedBefore = await metric('dropped');
      const { id, wamid } = await heldMessage('+5511987650022');
      const dropped = metaStatus(wamid, 'failed', id, {
        errors: [
          {
            code: 132015,
            title: 'Template is Paused',
            message: 'Template is Paused',
            error_data: { details: 'Feedback on the first batches suggests suspicious activity: the remaining held messages were dropped.' },
          },
        ],
      });
      assert.equal((await postWebhook(server, statusWebhook([dropped]))).status, 200);
      const failed = await waitForStatus(server, key, id, 'FAILED');
      assert.equal(failed.error.code, '132015');
      assert.match(failed.error.message, /held messages were dropped/);
      assert.equal(failed.held, false);
      assert.equal(failed.sentAt, null);
      const events = (await server.call('GET', `/v1/messages/${id}/events`, { key })).body.map((event: any) => event.status);
      assert.deepEqual(events, ['QUEUED', 'FAILED']);
      assert.equal(await metric('dropped'), droppedBefore + 1);
    });

    it('a message Meta accepts outright carries no held flag', async () => {
      fake.portfolioPacing = false;
      try {
        const id = await sendTemplate(server, key, 'spring_sale', '+5511987650023');
        const sent = await waitForStatus(server, key, id, 'SENT');
        assert.ok(!('held' in sent) && !('heldAt' in sent));
      } finally {
        fake.portfolioPacing = true;
      }
    });
  });
}
