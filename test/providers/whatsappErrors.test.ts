import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryAfterMs } from '../../src/providers/whatsapp/client.ts';
import { classifyGraphFailure, graphErrorClass, GRAPH_ERROR_CLASSES, isGraphOutage } from '../../src/providers/whatsapp/errors.ts';

function http(status: number, code?: number, retryAfter?: number, extra: Record<string, unknown> = {}) {
  return classifyGraphFailure({
    kind: 'http',
    status,
    error: code === undefined ? undefined : { message: `(#${code}) Title ${code}`, code, error_data: { details: `details ${code}` }, ...extra },
    retryAfterMs: retryAfter,
  });
}

/**
 * Every code of Meta's error-code table (Cloud API reference, "Error codes", with the Marketing
 * Messages additions), copied from the documentation rather than from the classifier, each with
 * the HTTP status Meta documents for it (400 where none is given).
 */
const META_TABLE: [number, number][] = [
  [0, 401], [3, 500], [10, 403], [190, 401], [200, 403], [250, 403], [299, 403],
  [368, 403], [130497, 403], [131031, 403],
  [2388040, 400], [2388047, 400], [2388072, 400], [2388073, 400], [2388293, 400], [2388299, 400], [2388019, 400],
  [2388001, 400], [2388012, 400], [2388091, 400], [2388093, 400], [2388103, 400], [2494100, 400],
  [200005, 400], [200006, 400], [200007, 400], [2593079, 400], [2593085, 400], [2593107, 400], [2593108, 400],
  [4, 400], [80007, 400], [130429, 400], [131048, 400], [131056, 400], [133016, 400],
  [1, 400], [2, 503], [33, 400], [100, 400], [130472, 400], [131000, 500], [131005, 403], [131008, 400], [131009, 400],
  [131016, 500], [131021, 400], [131026, 400], [131037, 400], [131042, 400], [131045, 500], [131047, 400], [131049, 400],
  [131050, 400], [131051, 400], [131052, 400], [131053, 400], [131057, 500], [132000, 400], [132001, 404], [132005, 400],
  [132007, 400], [132012, 400], [132015, 400], [132016, 400], [132068, 400], [132069, 400], [133000, 500], [133004, 503],
  [133005, 400], [133006, 400], [133008, 400], [133009, 400], [133010, 400], [133015, 400], [134011, 400], [135000, 400],
  [131055, 400], [134100, 400], [134101, 400], [134102, 500], [1752041, 400],
  // 2026: an expired pagination cursor (v24.0+), and a business-scoped user id for an authentication template.
  [131059, 400], [131062, 400],
];

const statusOf = new Map(META_TABLE);

describe('WhatsApp error map', () => {
  it('classifies every code of Meta’s table explicitly, never by its HTTP status', () => {
    const unclassified = META_TABLE.map(([code]) => code).filter((code) => graphErrorClass(code) === undefined);
    assert.deepEqual(unclassified, []);
  });

  for (const [kind, groups] of Object.entries(GRAPH_ERROR_CLASSES)) {
    for (const [group, codes] of Object.entries(groups)) {
      it(`${kind}: ${group} (${codes.join(', ')})`, () => {
        for (const code of codes as readonly number[]) {
          // Whatever HTTP status Meta answers it with (a 403 is not "retry", a 500 not always "retry").
          for (const status of new Set([statusOf.get(code) ?? 400, 400, 403, 500])) {
            assert.equal(http(status, code).kind, kind, `${code} with HTTP ${status}`);
          }
        }
      });
    }
  }

  it('treats policy restrictions and locked accounts (403) as permanent: no day of retries', () => {
    for (const code of [368, 130497, 131031]) assert.equal(http(403, code).kind, 'permanent', String(code));
  });

  it('retries a rejected token and a missing permission, so a rotated token rescues queued messages', () => {
    for (const code of [0, 190, 3, 10, 200, 299, 131005]) assert.equal(http(403, code).kind, 'transient', String(code));
  });

  it('decides codes Meta does not list by the HTTP status', () => {
    assert.equal(http(400, 999999).kind, 'permanent');
    assert.equal(http(500, 999999).kind, 'transient');
    assert.equal(http(429, 999999).kind, 'transient');
    assert.equal(http(500).kind, 'transient');
    assert.equal(http(401).kind, 'transient');
    assert.equal(http(404).kind, 'permanent');
    assert.equal(http(403).kind, 'permanent');
    assert.equal(classifyGraphFailure({ kind: 'timeout' }).kind, 'transient');
    assert.equal(classifyGraphFailure({ kind: 'network', detail: 'ECONNRESET' }).kind, 'transient');
  });

  it('never relies on error_subcode', () => {
    for (const subcode of [33, 2494055, 2388024]) {
      assert.equal(http(400, 131026, undefined, { error_subcode: subcode }).kind, 'permanent');
      assert.equal(http(400, 130429, undefined, { error_subcode: subcode }).kind, 'transient');
    }
  });

  it('reports the code as a string, the title without its (#code) prefix, the details and the fbtrace_id', () => {
    const outcome = http(400, 131026, undefined, { fbtrace_id: 'Az8or2yhqkZfEZ-_4Qn_Bam' });
    assert.deepEqual(outcome.error, { code: '131026', title: 'Title 131026', message: 'details 131026', fbtraceId: 'Az8or2yhqkZfEZ-_4Qn_Bam' });
    assert.ok(!('fbtraceId' in http(400, 131026).error));
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

  it('waits as long as Meta asks before retrying 131049 (24 h) and 134101 (10 min), whatever Retry-After says', () => {
    const limited = http(400, 131049);
    assert.equal(limited.kind, 'transient');
    assert.equal(limited.kind === 'transient' && limited.retryAfterMs, 24 * 3600_000);
    const syncing = http(400, 134101, 5_000);
    assert.equal(syncing.kind === 'transient' && syncing.retryAfterMs, 10 * 60_000);
    const longer = http(400, 134101, 20 * 60_000);
    assert.equal(longer.kind === 'transient' && longer.retryAfterMs, 20 * 60_000, 'a longer Retry-After still wins');
    const maintenance = http(500, 131057);
    assert.equal(maintenance.kind, 'transient');
    assert.equal(maintenance.kind === 'transient' && maintenance.retryAfterMs, undefined, 'maintenance: the next backoff step');
  });

  it('never retries what Meta says not to: experiment, stopped marketing, BSUID authentication, generic, paused, Marketing Messages refusals', () => {
    for (const code of [130472, 131050, 131062, 135000, 132015, 131055, 134100, 134102]) {
      assert.equal(http(statusOf.get(code)!, code).kind, 'permanent', String(code));
    }
  });

  it('takes an expired cursor (131059) as a call to make again', () => {
    assert.equal(http(400, 131059).kind, 'transient');
    assert.equal(isGraphOutage({ kind: 'http', status: 400, error: { code: 131059 }, retryAfterMs: undefined }), true);
  });

  it('tells an outage (try again) from a refusal (an answer) when checking credentials', () => {
    const failure = (status: number, code?: number) =>
      ({ kind: 'http', status, error: code === undefined ? undefined : { code }, retryAfterMs: undefined }) as const;
    for (const code of [1, 2, 131000, 133004, 4, 130429, 80007]) assert.equal(isGraphOutage(failure(500, code)), true, String(code));
    for (const code of [0, 190, 10, 200, 100, 33, 368]) assert.equal(isGraphOutage(failure(400, code)), false, String(code));
    assert.equal(isGraphOutage(failure(502)), true);
    assert.equal(isGraphOutage(failure(401)), false);
    assert.equal(isGraphOutage({ kind: 'timeout' }), true);
  });
});
