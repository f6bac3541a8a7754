import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// A WhatsApp message is charged once it is both delivered and priced, whichever of Meta's
// statuses says so last, at the example card's rate; a later pricing that differs takes the
// first charge back. Checked on the message and in GET /v1/analytics/cost.

const DAY = 86_400_000;

for (const kind of databaseKinds()) {
  describe(`what a WhatsApp message costs (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
    });
    after(() => setup.close());

    async function sent(): Promise<{ id: string; wamid: string }> {
      const id = await sendTemplate(server, key, 'spring_sale');
      const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
      return { id, wamid: providerMessageId };
    }
    const status = (wamid: string, name: string, id: string, pricing?: unknown) =>
      postWebhook(server, statusWebhook([metaStatus(wamid, name, id, pricing === undefined ? {} : { pricing })]));
    const message = async (id: string) => (await server.call('GET', `/v1/messages/${id}`, { key })).body;
    const costs = async () => {
      const today = Date.now() - (Date.now() % DAY);
      const reply = await server.call('GET', `/v1/analytics/cost?from=${new Date(today).toISOString()}&to=${new Date(today + DAY).toISOString()}&groupBy=category`, { key });
      assert.equal(reply.status, 200, reply.text);
      return Object.fromEntries(reply.body.groups.map((g: any) => [g.category, [g.charged, g.free, g.unpriced, g.amount]]));
    };

    it('charges a message delivered first and priced later, at its market’s rate', async () => {
      const { id, wamid } = await sent();
      await status(wamid, 'delivered', id);
      await until('delivered', async () => ((await message(id)).status === 'DELIVERED' ? true : undefined));
      assert.equal((await message(id)).cost, undefined, 'no pricing, no cost');
      assert.deepEqual(await costs(), {});
      // Meta's read status brings the pricing: Brazil (+55), marketing, by the example card 0.0625.
      await status(wamid, 'read', id, metaPricing('marketing'));
      const priced = await until('charged', async () => (await message(id)).cost ?? undefined);
      assert.deepEqual(priced, { amount: 0.0625, currency: 'USD' });
      assert.deepEqual(await costs(), { marketing: [1, 0, 0, 0.0625] });
      // The same pricing again changes nothing.
      await status(wamid, 'read', id, metaPricing('marketing'));
      assert.deepEqual(await costs(), { marketing: [1, 0, 0, 0.0625] });
    });

    it('takes a charge back when Meta’s pricing changes, and counts what it cannot price', async () => {
      const { id, wamid } = await sent();
      await status(wamid, 'delivered', id, metaPricing('marketing'));
      await until('charged', async () => (await message(id)).cost ?? undefined);
      assert.deepEqual(await costs(), { marketing: [2, 0, 0, 0.125] });
      // Meta says it again, as free: the marketing charge goes, a free utility message comes.
      await status(wamid, 'read', id, metaPricing('utility', 'free_customer_service'));
      await until('free', async () => ((await message(id)).pricing.type === 'free_customer_service' ? true : undefined));
      assert.equal((await message(id)).cost, null);
      assert.deepEqual(await costs(), { marketing: [1, 0, 0, 0.0625], utility: [0, 1, 0, 0] });

      // A rate the example card lacks (authentication-international in Brazil): charged by Meta, unpriced here.
      const other = await sent();
      await status(other.wamid, 'delivered', other.id, metaPricing('authentication-international'));
      await until('priced', async () => ((await message(other.id)).pricing ? true : undefined));
      assert.equal((await message(other.id)).cost, null);
      assert.deepEqual((await costs()).authentication_international, [0, 0, 1, 0]);
    });
  });
}
