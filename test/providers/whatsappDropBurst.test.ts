import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import { connectedProject, PHONE_NUMBER_ID, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// Meta drops every remaining held message at once (portfolio pacing: `failed`, 132015) when it
// puts the business portfolio under review: svc fails each with Meta's reason, counts them, and
// raises an operator alert (an error-level log and svc_provider_drop_bursts_total) on the burst.

const DROP = {
  code: 132015,
  title: 'Template is Paused',
  message: 'Template is Paused',
  error_data: { details: 'Feedback suggests suspicious activity: the remaining held messages were dropped.' },
};

for (const kind of databaseKinds()) {
  describe(`a burst of dropped held messages (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    const lines: any[] = [];

    before(async () => {
      const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      setup = await startWhatsApp(kind, { logger });
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
      fake.portfolioPacing = true;
    });
    after(() => setup.close());

    async function metric(name: string): Promise<number> {
      const text = (await server.call('GET', '/metrics')).text;
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    }

    it('fails each with Meta’s reason, counts them, and alerts the operator once for the burst', async () => {
      const burstsBefore = await metric('svc_provider_drop_bursts_total');
      const droppedBefore = await metric('svc_provider_dropped_messages_total');
      const held: { id: string; wamid: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const id = await sendTemplate(server, key, 'spring_sale', `+55119876531${String(i).padStart(2, '0')}`);
        const row = await until(`${id} held`, async () => {
          const found = await messageRow(server, id);
          return found.held_at !== null ? found : undefined;
        });
        held.push({ id, wamid: row.provider_message_id! });
      }
      const statuses = held.map(({ id, wamid }) => metaStatus(wamid, 'failed', id, { errors: [DROP] }));
      assert.equal((await postWebhook(server, statusWebhook(statuses))).status, 200);
      for (const { id } of held) {
        const failed = await waitForStatus(server, key, id, 'FAILED');
        assert.equal(failed.error.code, '132015');
        assert.match(failed.error.message, /held messages were dropped/);
      }
      // Meta sends the notification again: nothing is counted twice.
      assert.equal((await postWebhook(server, statusWebhook(statuses))).status, 200);
      assert.equal(await metric('svc_provider_dropped_messages_total'), droppedBefore + 12);
      assert.equal(await metric('svc_provider_drop_bursts_total'), burstsBefore + 1);
      const alerts = lines.filter((line) => line.level === 50 && line.code === '132015');
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0].phoneNumberId, PHONE_NUMBER_ID);
      assert.equal(alerts[0].dropped, 10);
    });
  });
}
