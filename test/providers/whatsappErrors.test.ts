import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createProvider } from '../../src/providers/index.ts';
import { retryAfterMs } from '../../src/providers/whatsapp/client.ts';
import { classifyGraphFailure } from '../../src/providers/whatsapp/errors.ts';
import { reportsOf } from '../../src/providers/whatsapp/webhook.ts';
import type { Notifier } from '../../src/workers/notifier.ts';

function http(status: number, code?: number, retryAfter?: number) {
  return classifyGraphFailure({
    kind: 'http',
    status,
    error: code === undefined ? undefined : { message: `(#${code}) Title ${code}`, code, error_data: { details: `details ${code}` } },
    retryAfterMs: retryAfter,
  });
}

describe('WhatsApp error map', () => {
  it('retries throttling, outages and rejected tokens', () => {
    for (const code of [4, 80007, 130429, 131048, 131056, 131000, 133004, 190, 0, 10, 200]) {
      assert.equal(http(400, code).kind, 'transient', String(code));
    }
    assert.equal(http(500).kind, 'transient');
    assert.equal(http(503, 1).kind, 'transient');
    assert.equal(http(401).kind, 'transient');
    assert.equal(http(429).kind, 'transient');
    assert.equal(classifyGraphFailure({ kind: 'timeout' }).kind, 'transient');
    assert.equal(classifyGraphFailure({ kind: 'network', detail: 'ECONNRESET' }).kind, 'transient');
  });

  it('fails at once on what a retry cannot fix', () => {
    for (const code of [100, 131008, 131009, 131026, 131047, 131051, 132000, 132001, 132005, 132007, 132012, 132015, 132016, 133010, 470, 131030]) {
      assert.equal(http(400, code).kind, 'permanent', String(code));
    }
    // A permanent code wins over a 5xx status; an unknown 4xx is permanent.
    assert.equal(http(500, 131026).kind, 'permanent');
    assert.equal(http(400, 999999).kind, 'permanent');
    assert.equal(http(404).kind, 'permanent');
  });

  it('reports the code as a string, the title without its (#code) prefix, and the details', () => {
    assert.deepEqual(http(400, 131026).kind === 'permanent' && http(400, 131026).error, {
      code: '131026',
      title: 'Title 131026',
      message: 'details 131026',
    });
    assert.equal(http(502).error.code, 'http_502');
  });

  it('honours Retry-After', () => {
    const outcome = http(429, 130429, 30_000);
    assert.equal(outcome.kind === 'transient' && outcome.retryAfterMs, 30_000);
    assert.equal(retryAfterMs('7'), 7000);
    assert.ok((retryAfterMs(new Date(Date.now() + 60_000).toUTCString()) ?? 0) > 50_000, 'an HTTP date');
    assert.equal(retryAfterMs(undefined), undefined);
    assert.equal(retryAfterMs('soon'), undefined);
  });
});

describe('WhatsApp webhook payloads', () => {
  it('skips statuses svc has no state for, and anything malformed', () => {
    const reports = reportsOf({
      entry: [
        { changes: [{ field: 'messages', value: { statuses: [{ id: 'wamid.1', status: 'deleted', timestamp: '1' }, { status: 'read' }, null] } }] },
        { changes: [{ field: 'message_template_status_update', value: { event: 'PAUSED', message_template_id: 1 } }] },
        null,
      ],
    });
    assert.deepEqual(reports, { messages: [], templates: [] });
    assert.deepEqual(reportsOf('nonsense'), { messages: [], templates: [] });
  });
});

describe('createProvider (whatsapp)', () => {
  it('refuses to start without the app secret or the verify token', () => {
    const deps = [{} as Database, {} as Notifier, pino({ level: 'silent' })] as const;
    assert.throws(
      () => createProvider(loadConfig({ SVC_PROVIDER: 'whatsapp', SVC_WHATSAPP_VERIFY_TOKEN: 'v' }), ...deps),
      /SVC_WHATSAPP_APP_SECRET/,
    );
    assert.throws(
      () => createProvider(loadConfig({ SVC_PROVIDER: 'whatsapp', SVC_WHATSAPP_APP_SECRET: 's' }), ...deps),
      /SVC_WHATSAPP_VERIFY_TOKEN/,
    );
  });
});
