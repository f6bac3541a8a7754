import { FAKE_WABA_ID } from './fakeGraphApi.ts';
import { PHONE_NUMBER_ID } from './whatsapp.ts';

// What Meta POSTs to svc when recipients write to a project's number, in the shapes of Meta's
// webhooks reference (messages: button, interactive, text; user_preferences). Sign and post them
// with postWebhook (whatsapp.ts).

export function messagesWebhook(messages: unknown[], phoneNumberId = PHONE_NUMBER_ID, waba = FAKE_WABA_ID) {
  const from = (messages[0] as { from?: string } | undefined)?.from ?? '5511987654321';
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: 'Ana' }, wa_id: from }],
              messages,
            },
          },
        ],
      },
    ],
  };
}

export function preferencesWebhook(waId: string, value: 'stop' | 'resume', phoneNumberId = PHONE_NUMBER_ID) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: FAKE_WABA_ID,
        changes: [
          {
            field: 'user_preferences',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts: [{ wa_id: waId }],
              user_preferences: [
                {
                  wa_id: waId,
                  detail: `User requested to ${value} marketing messages`,
                  category: 'marketing_messages',
                  value,
                  timestamp: Math.floor(Date.now() / 1000),
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

let inboundSequence = 0;
/** A fresh inbound wamid. */
export const inboundId = () => `wamid.inbound.${++inboundSequence}`;
export const seconds = () => String(Math.floor(Date.now() / 1000));

export function buttonTap(wamid: string, text: string, payload = text, from = '5511987654321') {
  return { context: { from: '15550783881', id: wamid }, from, id: inboundId(), timestamp: seconds(), type: 'button', button: { payload, text } };
}

export function textMessage(body: string, options: { inReplyTo?: string; from?: string } = {}) {
  return {
    ...(options.inReplyTo !== undefined && { context: { from: '15550783881', id: options.inReplyTo } }),
    from: options.from ?? '5511987654321',
    id: inboundId(),
    timestamp: seconds(),
    type: 'text',
    text: { body },
  };
}
