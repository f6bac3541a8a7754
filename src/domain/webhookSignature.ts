import { createHmac } from 'node:crypto';

// Standard Webhooks signatures (https://www.standardwebhooks.com): each signature is
// "v1," + base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")), where the key is
// the bytes of the secret after its "whsec_" prefix, base64-decoded. During a secret rotation
// every live secret signs, and the signatures are space-separated in one header: a receiver
// that knows either secret accepts the request.

const SECRET_PREFIX = 'whsec_';

/** The HMAC key of a `whsec_` secret. */
export function webhookSigningKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('a webhook secret cannot be empty');
  return key;
}

/** The signature of one request with one secret: `v1,<base64>`. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', webhookSigningKey(secret));
  mac.update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The `webhook-signature` header value: one signature per live secret, current first. */
export function signWebhook(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  if (secrets.length === 0) throw new Error('at least one secret must sign');
  return secrets.map((secret) => webhookSignature(secret, id, timestampSeconds, body)).join(' ');
}
