// The document's prose: the introduction (info.description, Markdown) and each tag's description.

export const INTRODUCTION = `
svc sends business messages (WhatsApp and the like) built from templates the provider approved.
A project holds the provider credentials, the templates, the messages and the API keys.

**Typical flow.** Create a project (\`POST /v1/projects\`, which returns the first API key); save
the provider credentials and, optionally, a \`callbackUrl\` (\`PUT /v1/projects/me/provider-credentials\`);
register a template and wait until it is \`APPROVED\`; send messages (\`POST /v1/messages\`, answered
\`202\` at once); follow each message by polling or through webhooks.

**Authentication.** Every operation but \`POST /v1/projects\` takes \`Authorization: Bearer svc_live_…\`.
A missing, malformed, unknown or revoked key is \`401\` with \`WWW-Authenticate: Bearer\`. Revocation
is immediate, for requests in flight too.

**Errors** are RFC 9457 problem details (\`application/problem+json\`, schema \`Problem\`): \`code\` is
stable and machine-readable, \`detail\` is for people, \`errors\` lists each invalid field, and
\`requestId\` equals the \`X-Request-Id\` header every answer carries. Beyond what each operation lists,
the HTTP layer may answer: \`405\` (\`method_not_allowed\`, with \`Allow\`) for a path that exists under
other methods, \`408\` (\`request_timeout\`) for a request not received in time, \`414\`
(\`uri_too_long\`), and \`431\` (\`request_header_fields_too_large\`).

**Lists** are bare JSON arrays, newest first. Page with \`limit\` (default 50, at most 200) and the opaque
\`cursor\` from the \`Link: <…>; rel="next"\` header, which is absent on the last page.

**Idempotency.** \`POST /v1/messages\` and \`POST /v1/messages/batch\` take an \`Idempotency-Key\`
(1–255 printable ASCII characters). Within 24 hours a repeat with the same body returns the original
answer with \`Idempotent-Replayed: true\`; the same key with another body is \`422\`
\`idempotency_key_reused\`; a repeat while the first is in flight is \`409\`.

**Rate limits.** Each API key has a quota per minute (\`RateLimit\` and \`RateLimit-Policy\` headers on every
answer); beyond it, \`429\` with \`Retry-After\`. \`503\` answers carry \`Retry-After\` too; both are safe to
retry (with the same \`Idempotency-Key\` for sends).

**Webhooks.** Each status change after \`QUEUED\` (and each template review outcome) is POSTed to the
project's \`callbackUrl\` and to its matching webhook endpoints, signed as Standard Webhooks describe
(\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\` with the project's \`whsec_\` secret). See the
webhooks section for each event's payload and headers. Delivery is at least once, possibly out of
order (\`occurred_at\` orders a message's events).
`.trim();

export const TAG_DESCRIPTIONS: Record<string, string> = {
  Projects: 'The project of the calling key: create one, read it, save its provider credentials, erase it.',
  'API keys': 'Keys of the project: create (the value is shown once), list, revoke (at once).',
  Templates: 'Message templates, reviewed by the provider: only APPROVED ones can send.',
  Messages: 'Send templated messages and follow their status (QUEUED → SENT → DELIVERED → READ, or FAILED).',
  Batches: 'Many messages of one template in one request, and their progress.',
  Suppressions: 'Numbers that must not be messaged (opt-outs): a send to one is 422 `recipient_suppressed`.',
  Analytics: 'Message status changes counted over time, and what delivered messages cost.',
  Webhooks:
    'The signing secret, webhook endpoints, and every delivery of an event with its attempts (retry and recover them).',
  Events: 'The project’s webhook events as a feed, for clients that pull instead of receiving webhooks.',
  Operations: 'Liveness, readiness and metrics, for operators and load balancers; no API key.',
  'Test helpers (sandbox only)':
    'Drive the sandbox provider by hand: approve or reject a template, move a message along. 404 with any other provider.',
};
