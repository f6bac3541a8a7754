import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { signatureOf } from '../../src/providers/whatsapp/webhook.ts';
import { databaseKinds } from '../support/databases.ts';
import { startFakeGraphApi, type FakeGraphApi } from '../support/fakeGraphApi.ts';
import { type RawReply, rawRequest } from '../support/rawHttp.ts';
import { sendBody, senderAt } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Issue #10: generated requests over every endpoint, from a fixed seed, each checked for what
// must hold whatever the input: no 5xx, every error a problem+json whose requestId is the
// X-Request-Id header, and no secret in any answer (API keys other than the one a creation
// returns, provider tokens, webhook secrets outside the webhook-secret endpoints).
// Requests go over raw sockets, so that what fetch will not send (two Authorization headers,
// unreadable URLs, odd bytes in headers) is sent too.

const SEED = 20_261_124;
const API_RUNS = 2400;
const WHATSAPP_RUNS = 400;
const APP_SECRET = 'fuzz-app-secret';
const VERIFY_TOKEN = 'fuzz-verify-token';

// ---------------------------------------------------------------------------------------------
// Values

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '../../etc/passwd',
  "' OR '1'='1",
  '"; drop table projects; --',
  '<script>alert(1)</script>',
  '\r\n',
  '\t',
  '\u202e',
  '\ud800',
  '\ufeff',
  '😀'.repeat(40),
  'x'.repeat(5000),
  '{{1}}',
  '{{0}}',
  '__proto__',
  'constructor',
  'null',
  '-1',
  '1e309',
  '9007199254740993',
  '2016-12-31T23:59:60Z',
  '2026-02-30T00:00:00Z',
  'svc_live_' + 'A'.repeat(40),
  'key_00000000000000000000000000',
  'msg_00000000000000000000000000',
  '00000000-0000-0000-0000-000000000000',
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
);

/** Mostly a plausible value, sometimes anything at all. */
const maybe = <T>(plausible: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 16, arbitrary: plausible }, { weight: 1, arbitrary: hostileString }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 });

const isoDate = fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
const phone = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('+5511987654321', '+15550000001', '+15550000002', '+15550000003', '+15550000004', '+12025550123') },
  { weight: 1, arbitrary: fc.constantFrom('123', '+0000000000', '5511987654321') },
);
// Numbers the suppression list gets: never those the sends use, or every send would be refused.
const SUPPRESSIBLE = ['+5511987650001', '+5511987650002', '+12025550199'];
const suppressible = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...SUPPRESSIBLE) }, { weight: 1, arbitrary: fc.constantFrom('123', '5511987650001') });
const slug = fc.stringMatching(/^[a-z0-9_]{1,24}$/);
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 });

function variables() {
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ '1': fc.constantFrom('Ana', 'Bo'), '2': fc.constantFrom('A-1001', '#7') }) },
    {
      weight: 1,
      arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('1', '2', '3', '0', '01'), hostileString), maybe(fc.string({ minLength: 1, maxLength: 12 })), {
        maxKeys: 4,
      }),
    },
  );
}

const component = fc.record(
  {
    type: maybe(fc.constantFrom('HEADER', 'BODY', 'FOOTER')),
    format: maybe(fc.constant('TEXT')),
    text: maybe(fc.constantFrom('Hello {{1}}, your order {{2}} is ready.', 'Hi there', 'Order {{1}}', '{{1}}', 'Thanks')),
  },
  { requiredKeys: ['type', 'text'] },
);

// ---------------------------------------------------------------------------------------------
// Requests

type Resource = 'message' | 'template' | 'key' | 'delivery' | 'endpoint';
type Auth = 'main' | 'other' | 'revoked' | 'fresh' | 'none' | 'malformed' | 'duplicate';

interface Endpoint {
  method: string;
  /** With :id where an id goes. */
  path: string;
  resource?: Resource;
  body?: fc.Arbitrary<unknown>;
  query?: fc.Arbitrary<Record<string, unknown>>;
  /**
   * Answers 503 `unavailable` on purpose: Meta's webhook, for a status naming an svc message
   * that cannot be found yet, so that Meta sends it again (README, WhatsApp Cloud API).
   */
  retryLater?: boolean;
}

// CURSOR stands for a cursor of a Link header seen earlier.
const listQuery = (filters: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record({ limit: maybe(fc.integer({ min: 1, max: 200 })), cursor: maybe(fc.constant('CURSOR')), ...filters }, { requiredKeys: [] });

const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/openapi.json' },
  { method: 'GET', path: '/docs/' },
  {
    method: 'POST',
    path: '/v1/projects',
    body: fc.record({ name: maybe(fc.string({ minLength: 1, maxLength: 30 })), ownerEmail: maybe(fc.emailAddress()) }),
  },
  { method: 'GET', path: '/v1/projects/me' },
  { method: 'DELETE', path: '/v1/projects/me' },
  {
    method: 'PUT',
    path: '/v1/projects/me/provider-credentials',
    body: fc.record(
      {
        providerPhoneNumberId: maybe(fc.stringMatching(/^[0-9]{6,16}$/)),
        providerAccessToken: maybe(fc.stringMatching(/^[A-Za-z0-9]{24}$/).map((token) => `EAAG${token}`)),
        callbackUrl: maybe(fc.constantFrom('RECEIVER', 'https://hooks.example.com/svc', 'https:///host/path', 'https://10.0.0.1/x', null)),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/v1/projects/me/webhook-secret' },
  { method: 'POST', path: '/v1/projects/me/webhook-secret/rotate', body: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 1 })) },
  { method: 'GET', path: '/v1/projects/me/retention' },
  {
    method: 'PUT',
    path: '/v1/projects/me/retention',
    body: fc.record(
      {
        messages: maybe(fc.constantFrom('30s', '15m', '12h', '90d', '400d', '401d', '0s', '1.5h', 'soon', null)),
        webhookDeliveries: maybe(fc.constantFrom('1s', '7d', '30d', '31d', '-1d', null)),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'POST', path: '/v1/api-keys', body: fc.record({ name: maybe(fc.string({ minLength: 1, maxLength: 20 })) }) },
  { method: 'GET', path: '/v1/api-keys', query: listQuery({}) },
  { method: 'DELETE', path: '/v1/api-keys/:id', resource: 'key' },
  {
    method: 'POST',
    path: '/v1/templates',
    body: fc.record(
      {
        name: maybe(slug),
        language: maybe(fc.constantFrom('en', 'en_US', 'pt_BR', 'fil', 'EN')),
        category: maybe(fc.constantFrom('UTILITY', 'MARKETING', 'AUTHENTICATION')),
        components: maybe(
          fc.oneof(
            { weight: 3, arbitrary: fc.constant([{ type: 'BODY', text: 'Hello {{1}}, your order {{2}} is ready.' }]) },
            { weight: 1, arbitrary: fc.array(component, { maxLength: 4 }) },
          ),
        ),
      },
    ),
  },
  { method: 'GET', path: '/v1/templates', query: listQuery({}) },
  { method: 'GET', path: '/v1/templates/:id', resource: 'template' },
  { method: 'DELETE', path: '/v1/templates/:id', resource: 'template' },
  {
    method: 'POST',
    path: '/v1/test-helpers/templates/:id/review',
    resource: 'template',
    body: fc.record({ status: maybe(fc.constantFrom('APPROVED', 'REJECTED')), reason: maybe(fc.string({ minLength: 1, maxLength: 20 })) }, { requiredKeys: ['status'] }),
  },
  {
    method: 'POST',
    path: '/v1/test-helpers/messages/:id/advance',
    resource: 'message',
    body: fc.record({ status: maybe(fc.constantFrom('SENT', 'DELIVERED', 'READ', 'FAILED', 'QUEUED')) }),
  },
  {
    method: 'POST',
    path: '/v1/test-helpers/messages/:id/reply',
    resource: 'message',
    body: fc.record(
      {
        buttonIndex: maybe(fc.oneof(fc.integer({ min: -1, max: 11 }), fc.constant('0'))),
        text: maybe(fc.oneof(fc.constantFrom('STOP', ' stop ', 'Thanks!', ''), fc.string({ maxLength: 30 }))),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/v1/projects/me/opt-out' },
  {
    method: 'PUT',
    path: '/v1/projects/me/opt-out',
    body: fc.record(
      {
        keywords: maybe(fc.array(fc.oneof(fc.constantFrom('STOP', 'stop', ' ', 'CANCELAR'), fc.string({ maxLength: 70 })), { maxLength: 6 })),
        enabled: maybe(fc.oneof(fc.boolean(), fc.constant('yes'))),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/v1/projects/me/marketing-messages' },
  {
    method: 'PUT',
    path: '/v1/projects/me/marketing-messages',
    body: fc.record(
      { mode: maybe(fc.oneof(fc.constantFrom('off', 'fallback', 'strict', 'STRICT', ''), fc.string({ maxLength: 12 }), fc.integer())) },
      { requiredKeys: [] },
    ),
  },
  {
    method: 'POST',
    path: '/v1/messages',
    body: fc.record(
      {
        to: maybe(phone),
        template: maybe(fc.oneof({ weight: 6, arbitrary: fc.constant('TEMPLATE') }, { weight: 1, arbitrary: fc.constant('unknown_one') })),
        language: maybe(fc.oneof({ weight: 4, arbitrary: fc.constant('en_US') }, { weight: 1, arbitrary: fc.constantFrom('en', 'pt_BR') })),
        variables: maybe(variables()),
        headerVariables: maybe(fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: variables() })),
        sendAt: fc.constant('SOON'),
      },
      { requiredKeys: ['to', 'template', 'language', 'variables'] },
    ),
  },
  { method: 'POST', path: '/v1/messages/:id/cancel', resource: 'message' },
  {
    method: 'POST',
    path: '/v1/messages/batch',
    body: fc.record(
      {
        template: maybe(fc.oneof({ weight: 6, arbitrary: fc.constant('TEMPLATE') }, { weight: 1, arbitrary: fc.constant('unknown_one') })),
        language: maybe(fc.constantFrom('en_US', 'pt_BR')),
        items: maybe(
          fc.array(
            fc.record({ to: phone, variables: variables(), sendAt: fc.constant('SOON') }, { requiredKeys: ['to'] }),
            { maxLength: 5 },
          ),
        ),
      },
      { requiredKeys: ['template', 'language', 'items'] },
    ),
  },
  { method: 'GET', path: '/v1/batches', query: listQuery({}) },
  { method: 'GET', path: '/v1/batches/:id' },
  {
    method: 'POST',
    path: '/v1/suppressions',
    body: fc.record({ phoneNumber: maybe(suppressible), reason: maybe(fc.string({ minLength: 1, maxLength: 20 })) }, { requiredKeys: ['phoneNumber'] }),
  },
  { method: 'GET', path: '/v1/suppressions', query: listQuery({}) },
  { method: 'GET', path: '/v1/suppressions/:phoneNumber' },
  { method: 'DELETE', path: '/v1/suppressions/:phoneNumber' },
  {
    method: 'POST',
    path: '/v1/templates/:id/preview',
    resource: 'template',
    body: fc.record({ variables: maybe(variables()), headerVariables: maybe(variables()) }, { requiredKeys: [] }),
  },
  {
    method: 'GET',
    path: '/v1/messages',
    query: listQuery({
      status: maybe(fc.constantFrom('QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED')),
      to: maybe(phone),
      template: maybe(slug),
      since: maybe(isoDate),
      until: maybe(isoDate),
      batchId: maybe(fc.constantFrom('bat_01jd2k3m4n5p6q7r8s9t0v1w2x', 'x')),
    }),
  },
  { method: 'GET', path: '/v1/messages/:id', resource: 'message' },
  { method: 'GET', path: '/v1/messages/:id/events', resource: 'message' },
  {
    method: 'GET',
    path: '/v1/webhook-deliveries',
    query: listQuery({
      status: maybe(fc.constantFrom('pending', 'succeeded', 'failed')),
      event: maybe(fc.constantFrom('message.sent', 'message.delivered', 'message.read', 'message.failed')),
      messageId: hostileString,
      since: maybe(isoDate),
      until: maybe(isoDate),
    }),
  },
  { method: 'GET', path: '/v1/webhook-deliveries/:id', resource: 'delivery' },
  { method: 'POST', path: '/v1/webhook-deliveries/:id/retry', resource: 'delivery' },
  { method: 'POST', path: '/v1/webhook-deliveries/recover', body: fc.record({ since: maybe(isoDate) }, { requiredKeys: [] }) },
  {
    method: 'POST',
    path: '/v1/webhook-endpoints',
    body: fc.record(
      {
        url: maybe(fc.constantFrom('RECEIVER', 'https://hooks.example.com/svc', 'https:///host/path', 'ftp://x/y', 'https://10.0.0.1/x')),
        events: maybe(fc.array(fc.constantFrom('message.sent', 'message.failed', 'template.rejected', 'message.exploded'), { maxLength: 3 })),
        enabled: maybe(fc.boolean()),
        description: maybe(fc.oneof(fc.string({ maxLength: 30 }), fc.constant(null))),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/v1/webhook-endpoints', query: listQuery({}) },
  { method: 'GET', path: '/v1/events', query: listQuery({}) },
  { method: 'GET', path: '/v1/webhook-endpoints/:id', resource: 'endpoint' },
  {
    method: 'PATCH',
    path: '/v1/webhook-endpoints/:id',
    resource: 'endpoint',
    body: fc.record(
      {
        url: maybe(fc.constantFrom('RECEIVER', 'https://10.0.0.1/x')),
        events: maybe(fc.oneof(fc.constant(null), fc.array(fc.constantFrom('message.read', 'template.paused', 'nope'), { maxLength: 2 }))),
        enabled: maybe(fc.boolean()),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'DELETE', path: '/v1/webhook-endpoints/:id', resource: 'endpoint' },
  { method: 'POST', path: '/v1/webhook-endpoints/:id/test', resource: 'endpoint' },
  {
    method: 'GET',
    path: '/v1/analytics/messages',
    query: fc.record(
      {
        from: maybe(fc.constantFrom('2026-03-01T00:00:00Z', '2026-03-01T10:30:00.000Z')),
        to: maybe(fc.constantFrom('2026-03-02T00:00:00Z', '2026-02-01T00:00:00Z', '2027-03-01T00:00:00Z')),
        interval: maybe(fc.constantFrom('hour', 'day')),
        groupBy: maybe(fc.constantFrom('status', 'template', 'language')),
      },
      { requiredKeys: [] },
    ),
  },
  {
    method: 'GET',
    path: '/v1/analytics/cost',
    query: fc.record(
      {
        from: maybe(fc.constantFrom('2026-03-01T00:00:00Z', '2026-03-01T10:30:00.000Z', 'soon')),
        to: maybe(fc.constantFrom('2026-03-02T00:00:00Z', '2026-02-01T00:00:00Z', '2028-03-01T00:00:00Z')),
        groupBy: maybe(fc.constantFrom('day', 'market,category', 'day,template,category,market,country', 'status', 'day,,x', "day'--")),
      },
      { requiredKeys: [] },
    ),
  },
  {
    method: 'GET',
    path: '/v1/analytics/cost/reconciliation',
    query: fc.record(
      {
        from: maybe(fc.constantFrom('2026-03-01T00:00:00Z', '2026-03-01T10:30:00.000Z')),
        to: maybe(fc.constantFrom('2026-03-02T00:00:00Z', '2026-02-01T00:00:00Z', '2028-03-01T00:00:00Z')),
      },
      { requiredKeys: [] },
    ),
  },
];

const WHATSAPP_ENDPOINTS: Endpoint[] = [
  {
    method: 'GET',
    path: '/v1/providers/whatsapp/webhook',
    query: fc.record(
      {
        'hub.mode': maybe(fc.constant('subscribe')),
        'hub.verify_token': maybe(fc.constantFrom(VERIFY_TOKEN, 'wrong')),
        'hub.challenge': maybe(fc.string({ maxLength: 20 })),
      },
      { requiredKeys: [] },
    ),
  },
  {
    method: 'POST',
    path: '/v1/providers/whatsapp/webhook',
    retryLater: true,
    body: fc.record({
      object: maybe(fc.constant('whatsapp_business_account')),
      entry: maybe(
        fc.array(
          fc.record({
            id: maybe(fc.constant('102290129340398')),
            time: maybe(fc.integer({ min: 0, max: 2_000_000_000 })),
            changes: maybe(
              fc.array(
                fc.oneof(
                  fc.record({
                    field: fc.constant('messages'),
                    value: fc.record({
                      statuses: maybe(
                        fc.array(
                          fc.record(
                            {
                              id: maybe(fc.string({ minLength: 1, maxLength: 20 }).map((text) => `wamid.${text}`)),
                              status: maybe(fc.constantFrom('sent', 'delivered', 'read', 'failed', 'deleted')),
                              timestamp: maybe(fc.integer({ min: 0, max: 2_000_000_000 }).map(String)),
                              biz_opaque_callback_data: maybe(fc.constantFrom('MESSAGE', 'msg_00000000000000000000000000')),
                              errors: maybe(fc.array(fc.record({ code: maybe(fc.integer()), title: hostileString }), { maxLength: 1 })),
                            },
                            { requiredKeys: [] },
                          ),
                          { maxLength: 3 },
                        ),
                      ),
                    }),
                  }),
                  fc.record({
                    field: fc.constant('message_template_status_update'),
                    value: fc.record({
                      message_template_id: maybe(fc.string({ minLength: 1, maxLength: 12 })),
                      event: maybe(fc.constantFrom('APPROVED', 'REJECTED', 'DISABLED', 'PENDING')),
                      reason: maybe(fc.constantFrom('NONE', 'INVALID_FORMAT')),
                    }),
                  }),
                ),
                { maxLength: 2 },
              ),
            ),
          }),
          { maxLength: 2 },
        ),
      ),
    }),
  },
];

interface Spec {
  endpoint: number;
  auth: Auth;
  /** Which id goes into the path. */
  id: { kind: 'own' | 'foreign' | 'hostile' | 'raw'; index: number; text: string };
  query: Record<string, unknown> | undefined;
  /** Appended to the query string as written (duplicates, bad escapes…). */
  rawQuery: string;
  /**
   * json: the endpoint's body; any-json: any JSON; raw: text sent as JSON; text: a form as
   * text/plain; huge: over the body limit; unsigned: the body without the X-Hub-Signature-256 that
   * a post to the WhatsApp webhook gets otherwise.
   */
  body: { kind: 'json' | 'any-json' | 'raw' | 'none' | 'text' | 'huge' | 'unsigned'; value: unknown; text: string };
  headers: [string, string][];
  /** Another method on the endpoint's path (405 or 404), sometimes. */
  method: string | undefined;
}

const RAW_SEGMENTS = ['%', '%zz', '..', '.', '%2F', '%00', '%E0%A4%A', '%C3%A9', 'a%20b', '%7B%7D', '~', '*'];
const RAW_QUERIES = ['&limit=1&limit=2', '&%', '&cursor=%zz', '&since=%00', '&=x', '&&', '&limit=%2B1', '&to=+5511987654321'];

function specOf(endpoints: Endpoint[]): fc.Arbitrary<Spec> {
  return fc.nat({ max: endpoints.length - 1 }).chain((index) => {
    const endpoint = endpoints[index]!;
    return fc.record({
      endpoint: fc.constant(index),
      auth: fc.oneof(
        { weight: 12, arbitrary: fc.constant<Auth>('main') },
        { weight: 1, arbitrary: fc.constantFrom<Auth>('other', 'revoked', 'fresh', 'none', 'malformed', 'duplicate') },
      ),
      id: fc.record({
        kind: fc.oneof({ weight: 5, arbitrary: fc.constant('own' as const) }, { weight: 1, arbitrary: fc.constantFrom('foreign' as const, 'hostile' as const, 'raw' as const) }),
        index: fc.nat(),
        text: fc.oneof(hostileString, fc.constantFrom(...RAW_SEGMENTS)),
      }),
      query: endpoint.query ? optional(endpoint.query) : fc.constant(undefined),
      rawQuery: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES) }),
      body: endpoint.body
        ? fc.record({
            kind: fc.oneof(
              { weight: 10, arbitrary: fc.constant('json' as const) },
              { weight: 1, arbitrary: fc.constantFrom('any-json' as const, 'raw' as const, 'none' as const, 'text' as const, 'huge' as const, 'unsigned' as const) },
            ),
            value: endpoint.body,
            text: fc.oneof(fc.constantFrom('{', '{"a":', '[1,', 'null', '"x"', '{"__proto__":{"x":1}}', '\u0000'), fc.string({ maxLength: 20 })),
          })
        : fc.constant({ kind: 'none' as const, value: undefined, text: '' }),
      headers: fc.array(
        fc.oneof(
          fc.tuple(
            fc.constant('X-Request-Id'),
            fc.oneof({ weight: 10, arbitrary: fc.oneof(printable, fc.constantFrom('trace-1', 'x'.repeat(300))) }, { weight: 1, arbitrary: fc.constant('a\u0001b') }),
          ),
          fc.tuple(
            fc.constant('Idempotency-Key'),
            fc.oneof({ weight: 10, arbitrary: fc.oneof(printable, fc.constantFrom('"quoted"', '"', 'x'.repeat(300))) }, { weight: 1, arbitrary: fc.constant('k\u007f') }),
          ),
          fc.tuple(fc.constant('Accept'), fc.constantFrom('application/json', 'text/html', '*/*', 'application/problem+json')),
          fc.tuple(fc.constant('Host'), fc.constantFrom('evil.example', 'localhost:1', '')),
          fc.tuple(fc.constant('X-Forwarded-Host'), fc.constantFrom('evil.example')),
        ),
        { maxLength: 2 },
      ),
      method: fc.oneof(
        { weight: 14, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') },
      ),
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The service under test, what the fuzzer knows about it, and the checks

interface Project {
  projectId: string;
  key: string;
}

interface World {
  server: TestServer;
  receiver: WebhookReceiver;
  templateName: string;
  /** Active keys of the main project; the first is the one requests use. */
  mainKeys: { id: string; key: string }[];
  other: Project;
  revokedKey: string;
  fresh: Project[];
  own: Record<Resource, string[]>;
  foreign: Record<Resource, string>;
  /** Cursors of Link headers seen so far. */
  cursors: string[];
  /** The OpenAPI document: its examples (a made-up whsec_…) are not secrets. */
  published: string;
  /** Every API key value ever handed out, provider token saved and webhook secret seen. */
  secrets: { apiKeys: Set<string>; tokens: Set<string>; webhookSecrets: Set<string> };
}

const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length === 0 ? undefined : items[index % items.length]);

/** Erases the project of its key: only ever sent with the key of a project the fuzzer created. */
const erases = (method: string, endpoint: Endpoint) => method === 'DELETE' && endpoint.path === '/v1/projects/me';

function authHeaders(world: World, auth: Auth, destructive: boolean): string[] {
  const bearer = (key: string) => `Authorization: Bearer ${key}`;
  if (destructive && (auth === 'main' || auth === 'other')) auth = 'fresh';
  switch (auth) {
    case 'main':
      return [bearer(world.mainKeys[0]!.key)];
    case 'other':
      return [bearer(world.other.key)];
    case 'revoked':
      return [bearer(world.revokedKey)];
    case 'fresh': {
      const project = world.fresh.at(-1);
      return project ? [bearer(project.key)] : [];
    }
    case 'none':
      return [];
    case 'malformed':
      return ['Authorization: Basic dXNlcjpwYXNz'];
    case 'duplicate':
      return [bearer(world.mainKeys[0]!.key), bearer(world.other.key)];
  }
}

/** Percent-encodes every byte but the unreserved ones (lone surrogates become U+FFFD first). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

function pathOf(world: World, endpoint: Endpoint, method: string, spec: Spec): string {
  if (!endpoint.resource) {
    // Paths with a number, or an id the fixture does not track (batches): plausible or hostile values.
    const number = spec.id.kind === 'own' ? (pick(SUPPRESSIBLE, spec.id.index) ?? '') : spec.id.text;
    const id = spec.id.kind === 'raw' && RAW_SEGMENTS.includes(spec.id.text) ? spec.id.text : percentEncoded(spec.id.text);
    return endpoint.path.replace(':phoneNumber', percentEncoded(number)).replace(':id', id);
  }
  const { kind, index, text } = spec.id;
  // The fixture's template stays, so that sends keep reaching past the template lookup.
  const own = method === 'DELETE' && endpoint.resource === 'template' ? world.own.template.slice(1) : world.own[endpoint.resource];
  let segment: string;
  if (kind === 'own') segment = pick(own, index) ?? 'none';
  else if (kind === 'foreign') segment = world.foreign[endpoint.resource];
  else if (kind === 'raw' && RAW_SEGMENTS.includes(text)) segment = text;
  else segment = percentEncoded(text);
  return endpoint.path.replace(':id', segment);
}

function queryOf(world: World, spec: Spec): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(spec.query ?? {})) {
    const cursor = value === 'CURSOR' ? pick(world.cursors, spec.id.index) : undefined;
    if (value === 'CURSOR' && cursor === undefined) continue;
    params.append(name, cursor ?? (typeof value === 'string' ? value : JSON.stringify(value)));
  }
  const text = params.toString() + spec.rawQuery;
  return text === '' ? '' : `?${text.replace(/^&/, '')}`;
}

/** Fills in the fixture's names where the generator left placeholders. */
function bodyValue(world: World, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const body = { ...(value as Record<string, unknown>) };
  if (body.template === 'TEMPLATE') body.template = world.templateName;
  // A time a moment ahead, so that scheduled sends are accepted too.
  if (body.sendAt === 'SOON') body.sendAt = new Date(Date.now() + 5000).toISOString();
  if (Array.isArray(body.items)) body.items = body.items.map((item) => bodyValue(world, item));
  if (body.callbackUrl === 'RECEIVER') body.callbackUrl = world.receiver.url;
  if (body.url === 'RECEIVER') body.url = world.receiver.url;
  if (Array.isArray(body.entry)) {
    body.entry = JSON.parse(JSON.stringify(body.entry).replaceAll('"MESSAGE"', JSON.stringify(pick(world.own.message, 0) ?? 'none')));
  }
  return body;
}

interface Sent {
  method: string;
  path: string;
  head: string[];
  body: string | undefined;
}

function requestOf(world: World, endpoints: Endpoint[], spec: Spec): Sent {
  const endpoint = endpoints[spec.endpoint]!;
  const method = spec.method ?? endpoint.method;
  const path = pathOf(world, endpoint, method, spec) + queryOf(world, spec);
  const head = [`${method} ${path} HTTP/1.1`];
  const extra = spec.headers.filter(([name]) => name !== 'Host');
  const host = spec.headers.find(([name]) => name === 'Host');
  head.push(`Host: ${host ? host[1] : '127.0.0.1'}`);
  head.push(...authHeaders(world, spec.auth, erases(method, endpoint)));
  head.push(...extra.map(([name, value]) => `${name}: ${value}`));
  let body: string | undefined;
  const { kind, value, text } = spec.body;
  if (kind === 'json' || kind === 'unsigned') body = JSON.stringify(bodyValue(world, value) ?? null);
  else if (kind === 'any-json') body = JSON.stringify(value ?? null);
  else if (kind === 'raw') body = text;
  else if (kind === 'text') body = 'name=x';
  else if (kind === 'huge') body = JSON.stringify({ name: 'x'.repeat(70 * 1024) });
  if (body !== undefined) head.push(`Content-Type: ${kind === 'text' ? 'text/plain' : 'application/json'}`);
  if (body !== undefined && endpoint.path.includes('whatsapp') && kind !== 'unsigned') {
    head.push(`X-Hub-Signature-256: ${signatureOf(body, APP_SECRET)}`);
  }
  return { method, path, head, body };
}

const API_KEY = /svc_live_[0-9A-Za-z]{20,}/g;
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9+/=]{20,}/g;

/** What is wrong with an answer, if anything. */
function problemsOf(world: World, endpoint: Endpoint, sent: Sent, reply: RawReply): string[] {
  const problems: string[] = [];
  if (!(reply.status >= 100)) return [`no answer (${reply.body})`];
  const retryLater = endpoint.retryLater && reply.status === 503 && reply.body.includes('"code":"unavailable"');
  if (reply.status >= 500 && !retryLater) problems.push(`${reply.status} ${reply.body.slice(0, 300)}`);
  if (!reply.headers['x-request-id']) problems.push('no X-Request-Id');
  // /docs redirects to /docs/ (a 301, not an error): every other non-2xx is a problem.
  const redirect = reply.status >= 300 && reply.status < 400 && sent.path.startsWith('/docs');
  if (reply.status >= 300 && !redirect) {
    if (reply.headers['content-type'] !== 'application/problem+json') {
      problems.push(`${reply.status} as ${reply.headers['content-type']}`);
    } else {
      const problem = reply.json();
      if (problem.requestId !== reply.headers['x-request-id']) problems.push('requestId differs from X-Request-Id');
      if (problem.status !== reply.status || typeof problem.code !== 'string' || typeof problem.detail !== 'string') {
        problems.push(`malformed problem ${reply.body.slice(0, 200)}`);
      }
    }
  }

  // Secrets: anything the request itself carried (echoed in an error) does not count.
  const asked = sent.path + (sent.body ?? '');
  const answer = Object.entries(reply.headers).map(([name, value]) => `${name}: ${value}`).join('\n') + '\n' + reply.body;
  const created = createdKeyOf(endpoint, sent, reply);
  for (const found of answer.match(API_KEY) ?? []) {
    if (found !== created && !asked.includes(found) && !world.published.includes(found)) {
      problems.push(`an API key in the answer: ${found.slice(0, 14)}…`);
    }
  }
  if (created !== undefined && world.secrets.apiKeys.has(created)) problems.push('a creation answered with a known key');
  for (const token of world.secrets.tokens) {
    if (answer.includes(token) && !asked.includes(token)) problems.push('a provider token in the answer');
  }
  if (!endpoint.path.startsWith('/v1/projects/me/webhook-secret')) {
    for (const found of answer.match(WEBHOOK_SECRET) ?? []) {
      if (!asked.includes(found) && !world.published.includes(found)) problems.push('a webhook secret in the answer');
    }
    for (const secret of world.secrets.webhookSecrets) {
      if (answer.includes(secret)) problems.push('a known webhook secret in the answer');
    }
  }
  return problems;
}

function createdKeyOf(endpoint: Endpoint, sent: Sent, reply: RawReply): string | undefined {
  if (reply.status !== 200 || sent.method !== 'POST') return undefined;
  if (endpoint.path === '/v1/projects') return reply.json().apiKey;
  if (endpoint.path === '/v1/api-keys') return reply.json().key;
  return undefined;
}

/** Learns from a successful answer what the next requests can aim at. */
function learn(world: World, endpoint: Endpoint, spec: Spec, sent: Sent, reply: RawReply): void {
  if (reply.status < 200 || reply.status >= 300) return;
  const next = reply.headers.link && /[?&]cursor=([^&>]+)/.exec(reply.headers.link)?.[1];
  if (next && world.cursors.length < 100) world.cursors.push(decodeURIComponent(next));
  const body = reply.headers['content-type']?.includes('json') ? reply.json() : undefined;
  const created = createdKeyOf(endpoint, sent, reply);
  if (created !== undefined) world.secrets.apiKeys.add(created);
  const usesMain = spec.auth === 'main' && !erases(sent.method, endpoint);
  switch (`${sent.method} ${endpoint.path}`) {
    case 'POST /v1/projects':
      world.fresh.push({ projectId: body.projectId, key: body.apiKey });
      break;
    case 'DELETE /v1/projects/me':
      world.fresh.pop();
      break;
    case 'POST /v1/api-keys':
      if (usesMain) {
        world.mainKeys.push({ id: body.id, key: body.key });
        world.own.key.push(body.id);
      }
      break;
    case 'DELETE /v1/api-keys/:id':
      if (usesMain) {
        world.mainKeys = world.mainKeys.filter((key) => key.id !== body.id);
        world.own.key = world.own.key.filter((id) => id !== body.id);
      }
      break;
    case 'POST /v1/templates':
      if (usesMain) world.own.template.push(body.id);
      break;
    case 'DELETE /v1/templates/:id':
      if (usesMain) world.own.template = world.own.template.filter((id) => id !== body.id);
      break;
    case 'POST /v1/messages':
      if (usesMain && reply.status === 202) world.own.message.push(body.id);
      break;
    case 'POST /v1/webhook-endpoints':
      if (usesMain && reply.status === 201) world.own.endpoint.push(body.id);
      break;
    case 'DELETE /v1/webhook-endpoints/:id':
      if (usesMain && reply.status === 204) world.own.endpoint = world.own.endpoint.filter((id) => !sent.path.split('?')[0]!.endsWith(`/${id}`));
      break;
    case 'PUT /v1/projects/me/provider-credentials': {
      const token = (bodyValue(world, spec.body.value) as { providerAccessToken?: unknown } | undefined)?.providerAccessToken;
      if (typeof token === 'string' && token.length >= 12) world.secrets.tokens.add(token);
      break;
    }
    case 'GET /v1/projects/me/webhook-secret':
    case 'POST /v1/projects/me/webhook-secret/rotate':
      for (const secret of body.secrets) world.secrets.webhookSecrets.add(secret);
      break;
  }
}

async function fuzz(world: World, endpoints: Endpoint[], runs: number) {
  const failures: string[] = [];
  const calls = new Map<string, { all: number; ok: number }>();
  for (const spec of fc.sample(specOf(endpoints), { seed: SEED, numRuns: runs })) {
    const endpoint = endpoints[spec.endpoint]!;
    const sent = requestOf(world, endpoints, spec);
    const reply = await rawRequest(world.server.url, sent.head, sent.body).catch(
      (error: Error): RawReply => ({ status: 0, headers: {}, body: error.message, json: () => undefined }),
    );
    const problems = problemsOf(world, endpoint, sent, reply);
    const name = `${endpoint.method} ${endpoint.path}`;
    const count = calls.get(name) ?? { all: 0, ok: 0 };
    count.all++;
    if (reply.status >= 200 && reply.status < 300) count.ok++;
    calls.set(name, count);
    if (problems.length > 0) {
      failures.push(`${sent.method} ${sent.path.slice(0, 200)} [${spec.auth}, body ${spec.body.kind}: ${(sent.body ?? '').slice(0, 200)}] → ${problems.join('; ')}`);
    } else {
      learn(world, endpoint, spec, sent, reply);
    }
  }
  return { failures, calls };
}

async function knownWebhookSecrets(server: TestServer, keys: string[]): Promise<string[]> {
  const secrets: string[] = [];
  for (const key of keys) secrets.push(...(await server.call('GET', '/v1/projects/me/webhook-secret', { key })).body.secrets);
  return secrets;
}

for (const kind of databaseKinds()) {
  describe(`fuzzing every endpoint (${kind})`, () => {
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver(ok);
    });
    after(() => receiver.close());

    // Thousands of requests: on a loaded machine they take longer than the suite's default bound.
    it(`${API_RUNS} generated requests: no 5xx, every error problem+json with its X-Request-Id, no secret`, { timeout: 600_000 }, async (t) => {
      const server = await startTestServer(kind, { env: { SVC_API_RATE_LIMIT: '1000000', SVC_SANDBOX_REVIEW_DELAY_MS: '300' } });
      try {
        const main = await senderAt(server.url);
        const other = await senderAt(server.url);
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key: main.key, body: { callbackUrl: receiver.url } });
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key: other.key, body: { callbackUrl: receiver.url } });
        const keys = (await server.call('GET', '/v1/api-keys', { key: main.key })).body;
        const revoked = (await server.call('POST', '/v1/api-keys', { key: main.key, body: { name: 'revoked' } })).body;
        await server.call('DELETE', `/v1/api-keys/${revoked.id}`, { key: main.key });
        const messages: string[] = [];
        for (const to of ['+5511987654321', '+15550000001', '+15550000003']) {
          messages.push((await server.call('POST', '/v1/messages', { key: main.key, body: sendBody(main, to) })).body.id);
        }
        const otherMessage = (await server.call('POST', '/v1/messages', { key: other.key, body: sendBody(other) })).body.id;
        await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes(otherMessage)));
        await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes(messages[0]!)));
        const delivery = async (key: string) => (await server.call('GET', '/v1/webhook-deliveries', { key })).body.map((item: any) => item.id);
        const otherKeyId = (await server.call('GET', '/v1/api-keys', { key: other.key })).body[0].id;
        const endpoint = async (key: string) =>
          (await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url } })).body.id as string;
        const doc = (await server.call('GET', '/openapi.json')).body;

        const world: World = {
          server,
          receiver,
          templateName: main.templateName,
          mainKeys: [{ id: keys[0].id, key: main.key }],
          other: { projectId: other.projectId, key: other.key },
          revokedKey: revoked.key,
          fresh: [],
          own: {
            message: messages,
            template: [main.templateId],
            key: [keys[0].id],
            delivery: await delivery(main.key),
            endpoint: [await endpoint(main.key)],
          },
          foreign: {
            message: otherMessage,
            template: other.templateId,
            key: otherKeyId,
            delivery: (await delivery(other.key))[0],
            endpoint: await endpoint(other.key),
          },
          cursors: [],
          published: JSON.stringify(doc),
          secrets: {
            apiKeys: new Set([main.key, other.key, revoked.key]),
            tokens: new Set(['EAAG-test-token']),
            webhookSecrets: new Set(await knownWebhookSecrets(server, [main.key, other.key])),
          },
        };

        const { failures, calls } = await fuzz(world, ENDPOINTS, API_RUNS);
        t.diagnostic(`calls (2xx/all): ${[...calls].map(([name, count]) => `${name} ${count.ok}/${count.all}`).join(', ')}`);

        // Every route the service has is fuzzed (a new route without an entry here fails this).
        for (const [path, operations] of Object.entries<Record<string, unknown>>(doc.paths)) {
          for (const method of Object.keys(operations)) {
            const name = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
            assert.ok((calls.get(name)?.all ?? 0) >= 20, `${name} was fuzzed ${calls.get(name)?.all ?? 0} times`);
          }
        }
        assert.deepEqual(failures.slice(0, 25), [], `${failures.length} failures`);
        // The webhook secrets never left their endpoint in this run's other answers either.
        assert.ok(world.secrets.webhookSecrets.size >= 2);
      } finally {
        await server.close();
      }
    });

    it(`${WHATSAPP_RUNS} generated requests to the WhatsApp webhook (signed, unsigned, hostile)`, async (t) => {
      const graph: FakeGraphApi = await startFakeGraphApi();
      const server = await startTestServer(kind, {
        env: {
          SVC_PROVIDER: 'whatsapp',
          SVC_WHATSAPP_GRAPH_URL: graph.url,
          SVC_WHATSAPP_APP_SECRET: APP_SECRET,
          SVC_WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
        },
      });
      try {
        const project = await server.createProject();
        const world: World = {
          server,
          receiver,
          templateName: 'none',
          mainKeys: [{ id: project.keyId, key: project.key }],
          other: project,
          revokedKey: project.key,
          fresh: [],
          own: { message: [], template: [], key: [], delivery: [], endpoint: [] },
          foreign: { message: 'none', template: 'none', key: 'none', delivery: 'none', endpoint: 'none' },
          cursors: [],
          published: '',
          secrets: { apiKeys: new Set([project.key]), tokens: new Set(), webhookSecrets: new Set() },
        };
        const { failures, calls } = await fuzz(world, WHATSAPP_ENDPOINTS, WHATSAPP_RUNS);
        t.diagnostic(`calls (2xx/all): ${[...calls].map(([name, count]) => `${name} ${count.ok}/${count.all}`).join(', ')}`);
        assert.deepEqual(failures.slice(0, 25), [], `${failures.length} failures`);
      } finally {
        await server.close();
        await graph.close();
      }
    });
  });
}
