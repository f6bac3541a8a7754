import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sealSecret } from '../src/domain/secretBox.ts';
import { liveWebhookSecrets, providerCredentialsOf, SecretOpener } from '../src/projectSecrets.ts';

const KEY = Buffer.alloc(32, 3);
const OTHER_KEY = Buffer.alloc(32, 4);

describe('project secrets', () => {
  it('an opener opens as the key does, and a rotated secret (a new sealed value) at once', () => {
    const opener = new SecretOpener(KEY);
    const first = sealSecret(KEY, 'whsec_first');
    assert.equal(opener.open(first), 'whsec_first');
    assert.equal(opener.open(first), 'whsec_first');
    // The same plaintext sealed again is another value; a new secret is never the old one's entry.
    assert.equal(opener.open(sealSecret(KEY, 'whsec_first')), 'whsec_first');
    assert.equal(opener.open(sealSecret(KEY, 'whsec_second')), 'whsec_second');
  });

  it('an opener refuses what its key did not seal, and remembers no failure', () => {
    const opener = new SecretOpener(KEY);
    const foreign = sealSecret(OTHER_KEY, 'whsec_foreign');
    assert.throws(() => opener.open(foreign));
    assert.throws(() => opener.open(foreign));
  });

  it('an opener stays bounded: past 10,000 secrets it forgets them and still opens each', () => {
    const opener = new SecretOpener(KEY);
    const sealed = Array.from({ length: 10_005 }, (_, i) => sealSecret(KEY, `s${i}`));
    for (const [i, value] of sealed.entries()) assert.equal(opener.open(value), `s${i}`);
    assert.equal(opener.open(sealed[0]!), 's0');
  });

  it('live webhook secrets and provider credentials are the same through an opener or the key', () => {
    const now = Date.now();
    const project = {
      webhook_secret_enc: sealSecret(KEY, 'whsec_new'),
      previous_webhook_secret_enc: sealSecret(KEY, 'whsec_old'),
      previous_webhook_secret_expires_at: now + 1000,
      provider_phone_number_id: '1234',
      provider_access_token_enc: sealSecret(KEY, 'EAAtoken'),
    };
    const opener = new SecretOpener(KEY);
    assert.deepEqual(liveWebhookSecrets(project, opener, now), ['whsec_new', 'whsec_old']);
    assert.deepEqual(liveWebhookSecrets(project, KEY, now), ['whsec_new', 'whsec_old']);
    assert.deepEqual(liveWebhookSecrets(project, opener, now + 1000), ['whsec_new']);
    assert.deepEqual(providerCredentialsOf(project, opener), { sender: '1234', secret: 'EAAtoken' });
    assert.equal(providerCredentialsOf({ ...project, provider_access_token_enc: null }, opener), undefined);
  });
});
