import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../src/domain/secretBox.ts';
import { signWebhook, webhookSignature, webhookSigningKey } from '../../src/domain/webhookSignature.ts';

const BODY = '{"event":"message.sent","message_id":"msg_1","to":"+14155550100","template":"t","status":"SENT","provider_message_id":"wamid.1","occurred_at":"2026-11-22T10:00:00.000Z"}';
const ID = '01a2080e-bdbc-71f4-ac95-f5b22776833e';

function headers(signature: string, timestamp: number) {
  return { 'webhook-id': ID, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

describe('webhook signatures (Standard Webhooks)', () => {
  it('matches the reference library, which verifies it', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook([secret], ID, timestamp, BODY);
    assert.equal(signature, new Webhook(secret).sign(ID, new Date(timestamp * 1000), BODY));
    assert.deepEqual(new Webhook(secret).verify(BODY, headers(signature, timestamp)), JSON.parse(BODY));
  });

  it('matches the Standard Webhooks specification’s test vector', () => {
    // From the specification's reference tests (standard-webhooks/libraries).
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = webhookSignature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with every live secret, space-separated, each verifiable alone', () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signWebhook([current, previous], ID, timestamp, BODY);
    const parts = header.split(' ');
    assert.equal(parts.length, 2);
    assert.equal(parts[0], webhookSignature(current, ID, timestamp, BODY));
    assert.equal(parts[1], webhookSignature(previous, ID, timestamp, BODY));
    for (const secret of [current, previous]) {
      assert.doesNotThrow(() => new Webhook(secret).verify(BODY, headers(header, timestamp)));
    }
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(BODY, headers(header, timestamp)));
  });

  it('changes with the id, the timestamp and every byte of the body', () => {
    const secret = generateWebhookSecret();
    const base = webhookSignature(secret, ID, 1000, BODY);
    assert.notEqual(webhookSignature(secret, ID.replace('0', '1'), 1000, BODY), base);
    assert.notEqual(webhookSignature(secret, ID, 1001, BODY), base);
    assert.notEqual(webhookSignature(secret, ID, 1000, BODY + ' '), base);
  });

  it('reads the key from the base64 after whsec_ and refuses an empty one', () => {
    assert.deepEqual(webhookSigningKey('whsec_AAEC'), Buffer.from([0, 1, 2]));
    assert.throws(() => webhookSigningKey('whsec_'));
    assert.throws(() => signWebhook([], ID, 1, BODY));
  });
});
