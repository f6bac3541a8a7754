import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import {
  DEFAULT_GRAPH_VERSION,
  EXPIRY_WARNING_DAYS,
  GRAPH_VERSIONS,
  graphVersionWarning,
} from '../../src/providers/whatsapp/graphVersions.ts';
import { databaseKinds } from '../support/databases.ts';
import { startFakeGraphApi } from '../support/fakeGraphApi.ts';
import { startTestServer } from '../support/server.ts';
import { APP_SECRET, VERIFY_TOKEN } from '../support/whatsapp.ts';

const at = (date: string) => Date.parse(`${date}T12:00:00Z`);
const WHATSAPP = { SVC_PROVIDER: 'whatsapp', SVC_WHATSAPP_APP_SECRET: 's', SVC_WHATSAPP_VERIFY_TOKEN: 'v' };

describe('Graph API version policy', () => {
  it('defaults to the version the adapter is tested against, v24.0 or newer, still served by Meta', () => {
    assert.equal(loadConfig(WHATSAPP).whatsapp.apiVersion, DEFAULT_GRAPH_VERSION);
    const major = Number(/^v(\d+)\./.exec(DEFAULT_GRAPH_VERSION)![1]);
    assert.ok(major >= 24, DEFAULT_GRAPH_VERSION);
    assert.equal(graphVersionWarning(DEFAULT_GRAPH_VERSION, at('2026-11-26')), undefined);
    assert.equal(loadConfig({ ...WHATSAPP, SVC_WHATSAPP_API_VERSION: 'v25.0' }).whatsapp.apiVersion, 'v25.0');
  });

  it('refuses a version that is not of Graph’s form', () => {
    for (const version of ['latest', '24.0', 'v24', 'v24.0/../x', 'V24.0']) {
      assert.throws(() => loadConfig({ ...WHATSAPP, SVC_WHATSAPP_API_VERSION: version }), ConfigError, version);
    }
  });

  it('keeps Meta’s expiry dates, v21.0 expiring on 21 Jan 2027', () => {
    assert.equal(GRAPH_VERSIONS.find((entry) => entry.version === 'v21.0')?.expires, '2027-01-21');
    assert.ok(GRAPH_VERSIONS.some((entry) => entry.version === DEFAULT_GRAPH_VERSION));
    for (const entry of GRAPH_VERSIONS) {
      assert.match(entry.released, /^\d{4}-\d{2}-\d{2}$/);
      if (entry.expires !== null) assert.ok(entry.expires > entry.released, entry.version);
    }
  });

  it(`warns within ${EXPIRY_WARNING_DAYS} days of the expiry, and once expired`, () => {
    assert.equal(graphVersionWarning('v21.0', at('2026-10-22')), undefined, '91 days ahead: quiet');
    const soon = graphVersionWarning('v21.0', Date.parse('2026-10-23T00:00:00Z'));
    assert.match(soon ?? '', /v21\.0 expires on 2027-01-21 \(in 90 days\)/);
    assert.match(soon ?? '', new RegExp(`SVC_WHATSAPP_API_VERSION=${DEFAULT_GRAPH_VERSION.replace('.', '\\.')}`));
    assert.match(graphVersionWarning('v21.0', at('2027-01-20')) ?? '', /in 1 day\)/);
    assert.match(graphVersionWarning('v21.0', Date.parse('2027-01-21T00:00:00Z')) ?? '', /v21\.0 expired on 2027-01-21/);
    assert.match(graphVersionWarning('v20.0', at('2026-11-26')) ?? '', /expired on 2026-09-24/);
    assert.equal(graphVersionWarning('v26.0', at('2030-01-01')), undefined, 'no expiry named yet');
    assert.match(graphVersionWarning('v99.0', at('2026-11-26')) ?? '', /not in svc's table/);
  });

  for (const kind of databaseKinds()) {
    it(`logs the warning when the service starts (${kind}), and nothing for the default`, async () => {
      const fake = await startFakeGraphApi();
      const logs = async (version: string | undefined) => {
        const lines: string[] = [];
        const server = await startTestServer(kind, {
          env: {
            SVC_PROVIDER: 'whatsapp',
            SVC_WHATSAPP_GRAPH_URL: fake.url,
            SVC_WHATSAPP_APP_SECRET: APP_SECRET,
            SVC_WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
            ...(version !== undefined && { SVC_WHATSAPP_API_VERSION: version }),
          },
          logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
        });
        await server.close();
        return lines.map((line) => JSON.parse(line)).filter((line) => line.graphApiVersion !== undefined);
      };
      try {
        // v20.0 expired on 24 Sep 2026: whatever today is, it is past.
        const expired = await logs('v20.0');
        assert.equal(expired.length, 1);
        assert.equal(expired[0].level, 40, 'warn');
        assert.match(expired[0].msg, /Graph API v20\.0 expired on 2026-09-24/);
        assert.deepEqual(await logs(undefined), []);
      } finally {
        await fake.close();
      }
    });
  }
});
